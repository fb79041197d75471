internal import GatehouseCore
internal import HTTPClient
internal import ProviderEngine

/// Builds the outbound request for a provider endpoint: templates rendered, empty values
/// dropped (as OAuth.io does), the query in the URL for GET and DELETE, and otherwise a form
/// body, or a JSON object of strings where the definition says `"body": "json"`.
enum EndpointRequest {
    static func make(
        _ endpoint: Endpoint, context: TemplateContext, extraHeaders: [HTTPHeader] = [], extraQuery: [String: String] = [:]
    ) -> HTTPClientRequest {
        var pairs: [(String, String)] = []
        for (name, template) in (endpoint.query ?? [:]).sorted(by: { $0.key < $1.key }) {
            let value = Template.render(template, context)
            if !value.isEmpty { pairs.append((name, value)) }
        }
        for (name, value) in extraQuery.sorted(by: { $0.key < $1.key }) where !value.isEmpty && !pairs.contains(where: { $0.0 == name }) {
            pairs.append((name, value))
        }
        let encoded = pairs.map { PercentEncoding.encode($0.0) + "=" + PercentEncoding.encode($0.1) }.joined(separator: "&")
        // A login-named host was checked by `hostRefusal` before any request was built.
        var url: String
        switch Template.renderAPIURL(endpoint.url, context, hosts: endpoint.hosts) {
        case .url(let rendered): url = rendered
        case .missing, .notAdmitted: url = Template.renderURL(endpoint.url, context)
        }
        var headers: [HTTPHeader] = []
        for (name, template) in (endpoint.headers ?? [:]).sorted(by: { $0.key < $1.key }) {
            let value = Template.render(template, context)
            if !value.isEmpty { headers.append(HTTPHeader(name: name, value: value)) }
        }
        headers += extraHeaders
        var body: [UInt8]?
        if endpoint.method == "GET" || endpoint.method == "DELETE" {
            if !encoded.isEmpty { url += (url.containsBytes("?") ? "&" : "?") + encoded }
        } else if endpoint.body == .json {
            body = jsonBody(pairs)
            headers.append(HTTPHeader(name: "Content-Type", value: "application/json"))
        } else {
            body = Array(encoded.utf8)
            headers.append(HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded"))
        }
        if !headers.contains(where: { $0.name.lowercased() == "accept" }) {
            let accept = endpoint.format == "url" ? "application/x-www-form-urlencoded" : (endpoint.format.map { $0 == "json" ? "application/json" : $0 } ?? "application/json")
            headers.append(HTTPHeader(name: "Accept", value: accept))
        }
        return HTTPClientRequest(method: endpoint.method, url: url, headers: headers, body: body, timeout: .seconds(15))
    }

    /// Why `endpoint`'s host, named by a flow value from `source` (the callback, the request),
    /// cannot be used; nil when it can, or when the definition fixes the host.
    static func hostRefusal(_ endpoint: Endpoint, context: TemplateContext, provider: String, source: String) -> String? {
        guard !endpoint.hosts.isEmpty else { return nil }
        return switch Template.renderAPIURL(endpoint.url, context, hosts: endpoint.hosts) {
        case .url: nil
        case .missing(let field): "The \(source) has no '\(field)', which names \(provider)'s host"
        case .notAdmitted(let field): "'\(field)' is not one of \(provider)'s hosts"
        }
    }

    /// `pairs` as a JSON object of strings; the first of a repeated name wins, as a definition's
    /// own query does over `extraQuery`.
    static func jsonBody(_ pairs: [(String, String)]) -> [UInt8] {
        JSONValue.object(Dictionary(pairs.map { ($0.0, JSONValue.string($0.1)) }) { first, _ in first }).serialized()
    }

    /// The authorize URL the browser is sent to.
    static func browserURL(_ endpoint: Endpoint, context: TemplateContext, extraQuery: [String: String]) -> String {
        make(Endpoint(url: endpoint.url, method: "GET", query: endpoint.query), context: context, extraQuery: extraQuery).url
    }
}
