internal import GatehouseCore
internal import GatehouseCrypto
internal import HTTPClient
internal import ProviderEngine

/// The two server-to-server steps of OAuth 1.0a: request token and access token.
struct OAuth1Exchange: Sendable {
    let outbound: HTTPClient

    struct RequestToken: Sendable {
        var token: String
        var secret: String
    }

    func requestToken(_ oauth1: OAuth1Definition, templates: TemplateContext, callback: String) async -> Result<RequestToken, ProviderProblem> {
        var endpoint = oauth1.requestToken
        // oauth_callback travels in the Authorization header, signed, not as a form field.
        endpoint.query = endpoint.query?.filter { $0.key != "oauth_callback" }
        let signer = OAuth1Signer(consumerKey: templates.keysetValue("client_id"), consumerSecret: templates.keysetValue("client_secret"))
        switch await signedCall(endpoint, templates: templates, signer: signer, extras: ["oauth_callback": callback], step: "request_token") {
        case .failure(let problem): return .failure(problem)
        case .success(let fields):
            guard let token = fields["oauth_token"]?.stringValue, let secret = fields["oauth_token_secret"]?.stringValue else {
                return .failure(ProviderProblem(message: "Error during the 'request_token' step (no oauth_token)", data: TokenResponse.errorData(fields)))
            }
            return .success(RequestToken(token: token, secret: secret))
        }
    }

    func accessToken(
        _ oauth1: OAuth1Definition, templates: TemplateContext, token: String, tokenSecret: String, verifier: String?
    ) async -> Result<JSONObject, ProviderProblem> {
        let signer = OAuth1Signer(
            consumerKey: templates.keysetValue("client_id"), consumerSecret: templates.keysetValue("client_secret"), token: token,
            tokenSecret: tokenSecret)
        var extras: [String: String] = [:]
        if let verifier { extras["oauth_verifier"] = verifier }
        switch await signedCall(oauth1.accessToken, templates: templates, signer: signer, extras: extras, step: "access_token") {
        case .failure(let problem): return .failure(problem)
        case .success(let fields):
            guard let token = fields["oauth_token"]?.stringValue, let secret = fields["oauth_token_secret"]?.stringValue else {
                return .failure(ProviderProblem(message: "Error during the 'access_token' step (no oauth_token)", data: TokenResponse.errorData(fields)))
            }
            var result: JSONObject = ["oauth_token": .string(token), "oauth_token_secret": .string(secret)]
            if let expires = TokenResponse.expiresIn(fields) { result["expires_in"] = .number(Double(expires)) }
            for name in oauth1.accessToken.extra { if let value = fields[name] { result[name] = value } }
            return .success(result)
        }
    }

    private func signedCall(
        _ endpoint: Endpoint, templates: TemplateContext, signer: OAuth1Signer, extras: [String: String], step: String
    ) async -> Result<JSONObject, ProviderProblem> {
        var request = EndpointRequest.make(endpoint, context: templates)
        let bodyFields = request.body.flatMap { FormField.parse(bytes: $0) } ?? []
        guard let nonce = try? SecureRandom.identifier() else { return .failure(ProviderProblem(message: "Internal error", data: .null)) }
        let header = signer.authorization(
            method: request.method, url: request.url, parameters: bodyFields, protocolExtras: extras, nonce: nonce, timestamp: Timestamp.now())
        request.headers.append(HTTPHeader(name: "Authorization", value: header))
        request.headers.removeAll { $0.name == "Accept" }
        let response: HTTPClientResponse
        do {
            response = try await outbound.execute(request)
        } catch {
            return .failure(ProviderProblem(message: "Error during the '\(step)' step (\(error.upstreamReason))", data: .null))
        }
        let fields = TokenResponse.fields(of: response, endpoint: endpoint, defaultFormat: "url")
        guard response.status == 200 || response.status == 201, let fields else {
            let data = TokenResponse.errorData(fields)
            return .failure(ProviderProblem(message: "Error during the '\(step)' step (HTTP \(response.status))", data: data))
        }
        return .success(fields)
    }
}
