internal import GatehouseCore
internal import HTTPClient
internal import ProviderEngine

extension LoginService {
    /// RFC 9126: the authorize parameters (already rendered into `authorizeURL`) are pushed to
    /// the provider's PAR endpoint with the app's client authentication, so they cannot be
    /// altered on the way and never show in the browser; the browser then carries only the
    /// `client_id` and the `request_uri` the provider handed back.
    func pushAuthorization(
        _ endpoint: Endpoint, oauth2: OAuth2Definition, authorizeURL: String, templates: TemplateContext, provider: String
    ) async -> Result<String, ProviderProblem> {
        let (base, query) = Self.splitQuery(authorizeURL)
        let url = Template.renderURL(endpoint.url, templates)
        let authenticated: (templates: TemplateContext, headers: [HTTPHeader])
        do throws(ClientAssertionError) { authenticated = try clientAuthentication(oauth2, url: url, templates: templates) } catch {
            return .failure(ProviderProblem(message: "Error during the 'par' step (\(error.reason))", data: .null))
        }
        // The authorize parameters carry the client_id already; the endpoint's own query and the
        // credentials add the rest.
        let present = Set((FormField.parse(query) ?? []).map(\.name))
        let added = Template.renderValues(endpoint.query, templates)
            + Template.renderValues(ProviderDefinition.clientCredentials(oauth2.clientAuthentication), authenticated.templates)
        let pairs = added.filter { !present.contains($0.name) }.map { PercentEncoding.encode($0.name) + "=" + PercentEncoding.encode($0.value) }
        let body = ([query].filter { !$0.isEmpty } + pairs).joined(separator: "&")
        let headers = Template.renderValues(endpoint.headers, templates).map { HTTPHeader(name: $0.name, value: $0.value) } + authenticated.headers
            + [HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded"), HTTPHeader(name: "Accept", value: "application/json")]
        let response: HTTPClientResponse
        do {
            let request = HTTPClientRequest(method: "POST", url: url, headers: headers, body: Array(body.utf8), timeout: .seconds(15))
            response = try await outbound.execute(request)
        } catch {
            context.metrics.upstream.increment(provider, "par", "unreachable")
            let reason = error.upstreamReason
            return .failure(ProviderProblem(message: "Error during the 'par' step (\(reason))", data: .null))
        }
        let fields = TokenResponse.fields(of: response, endpoint: endpoint)
        guard response.status == 201 || response.status == 200, let requestURI = fields?["request_uri"]?.stringValue, !requestURI.isEmpty else {
            context.metrics.upstream.increment(provider, "par", "error")
            let data = TokenResponse.errorData(fields)
            let reason = TokenResponse.reason(data, status: response.status)
            return .failure(ProviderProblem(message: "Error during the 'par' step (\(reason))", data: data))
        }
        context.metrics.upstream.increment(provider, "par", "ok")
        let clientID = templates.keysetValue("client_id")
        return .success(base + "?client_id=" + PercentEncoding.encode(clientID) + "&request_uri=" + PercentEncoding.encode(requestURI))
    }
}
