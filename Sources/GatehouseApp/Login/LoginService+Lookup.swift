internal import GatehouseCore
internal import HTTPClient
internal import ProviderEngine

extension LoginService {
    /// The definition's `lookup`, made with the access token a code exchange just returned:
    /// its exports, to be added to the login result (Mailchimp's `api_endpoint`).
    func lookup(_ lookup: LoginLookup, templates: TemplateContext, token: String, provider: String) async
        -> Result<JSONObject, ProviderProblem>
    {
        var templates = templates
        templates.flow["token"] = token
        let request = EndpointRequest.make(lookup.endpoint, context: templates)
        let response: HTTPClientResponse
        do {
            response = try await outbound.execute(request)
        } catch {
            context.metrics.upstream.increment(provider, "lookup", "unreachable")
            let message = "Error during the 'lookup' step (\(error.upstreamReason))"
            return .failure(ProviderProblem(message: message, data: .null))
        }
        guard (200..<300).contains(response.status), let body = JSONValue.parse(response.body), body.objectValue != nil else {
            context.metrics.upstream.increment(provider, "lookup", "error")
            let data = TokenResponse.errorData(JSONValue.parse(response.body)?.objectValue)
            let message = "Error during the 'lookup' step (\(TokenResponse.reason(data, status: response.status)))"
            return .failure(ProviderProblem(message: message, data: data))
        }
        context.metrics.upstream.increment(provider, "lookup", "ok")
        var exports: JSONObject = [:]
        ProfileEvaluator.exports(lookup.export, body: body, into: &exports)
        return .success(exports)
    }
}
