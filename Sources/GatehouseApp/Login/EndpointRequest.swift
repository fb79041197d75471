internal import GatehouseCore
internal import HTTPClient
internal import ProviderEngine

/// Builds the outbound request for a provider endpoint: templates rendered, empty values
/// dropped (as OAuth.io does), the query in the URL for GET and DELETE, and otherwise a form
/// body, or a JSON object of strings where the definition says `"body": "json"`.
enum EndpointRequest {
    /// `url` is the endpoint's URL as `url(_:context:provider:source:)` rendered it, for an
    /// endpoint that may list `hosts`; without it the definition's URL is rendered here.
    static func make(
        _ endpoint: Endpoint, url: String? = nil, context: TemplateContext, extraHeaders: [HTTPHeader] = [],
        extraQuery: [String: String] = [:]
    ) -> HTTPClientRequest {
        var pairs = Template.renderValues(endpoint.query, context)
        if !extraQuery.isEmpty {
            for (name, value) in extraQuery.sorted(by: { $0.key < $1.key }) where !value.isEmpty && !pairs.contains(where: { $0.name == name }) {
                pairs.append((name, value))
            }
        }
        var url = url ?? Template.renderURL(endpoint.url, context)
        var headers: [HTTPHeader] = []
        headers.reserveCapacity((endpoint.headers?.count ?? 0) + extraHeaders.count + 2)
        for (name, value) in Template.renderValues(endpoint.headers, context) { headers.append(HTTPHeader(name: name, value: value)) }
        headers += extraHeaders
        var body: [UInt8]?
        if endpoint.method == "GET" || endpoint.method == "DELETE" {
            if !pairs.isEmpty {
                url += url.containsBytes("?") ? "&" : "?"
                url += PercentEncoding.formEncoded(pairs.lazy.map { ($0.name, $0.value) })
            }
        } else if endpoint.body == .json {
            body = jsonBody(pairs)
            headers.append(HTTPHeader(name: "Content-Type", value: "application/json"))
        } else {
            body = PercentEncoding.formEncodedBytes(pairs.lazy.map { ($0.name, $0.value) })
            headers.append(HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded"))
        }
        if !headers.contains(where: { $0.hasName("accept") }) {
            let accept = endpoint.format == "url" ? "application/x-www-form-urlencoded" : (endpoint.format.map { $0 == "json" ? "application/json" : $0 } ?? "application/json")
            headers.append(HTTPHeader(name: "Accept", value: accept))
        }
        return HTTPClientRequest(method: endpoint.method, url: url, headers: headers, body: body, timeout: .seconds(15))
    }

    /// `endpoint`'s URL rendered, or why the host a flow value from `source` (the callback, the
    /// request) names in it cannot be used: it must be one of the endpoint's `hosts`.
    static func url(_ endpoint: Endpoint, context: TemplateContext, provider: String, source: String) -> Result<String, HostRefusal> {
        switch Template.renderAPIURL(endpoint.url, context, hosts: endpoint.hosts) {
        case .url(let url): .success(url)
        case .missing(let field): .failure(HostRefusal(message: "The \(source) has no '\(field)', which names \(provider)'s host"))
        case .notAdmitted(let fields): .failure(HostRefusal(message: hostRefusal(fields, provider: provider, hosts: "hosts")))
        }
    }

    /// Why the host that `fields` name is refused: `'instance_url' is not one of salesforce's hosts`.
    static func hostRefusal(_ fields: [String], provider: String, hosts: String) -> String {
        let named = fields.map { "'\($0)'" }.joined(separator: " and ")
        return named + (fields.count == 1 ? " is not one of " : " do not name one of ") + "\(provider)'s \(hosts)"
    }

    /// A host named by a flow value that the endpoint does not list.
    struct HostRefusal: Error {
        let message: String
    }

    /// `pairs` as a JSON object of strings; the first of a repeated name wins, as a definition's
    /// own query does over `extraQuery`.
    static func jsonBody(_ pairs: [(name: String, value: String)]) -> [UInt8] {
        var object = JSONObject()
        for (name, value) in pairs where object[name] == nil { object[name] = .string(value) }
        return JSONValue.object(object).serialized()
    }

    /// The authorize URL the browser is sent to.
    static func browserURL(_ endpoint: Endpoint, context: TemplateContext, extraQuery: [String: String]) -> String {
        make(Endpoint(url: endpoint.url, method: "GET", query: endpoint.query), context: context, extraQuery: extraQuery).url
    }
}
