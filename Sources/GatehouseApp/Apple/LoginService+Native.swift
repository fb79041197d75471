internal import GatehouseCore
internal import GatehouseCrypto
internal import HTTPServer
internal import JOSE
internal import ProviderEngine

extension LoginService {
    /// `POST /auth/:provider/native` (interface.md §3): a credential obtained on the device.
    /// Called by an app backend (`key` + `secret`: the credentials and profile come back
    /// directly) or by the app itself (`k` + `state`: a one-time code comes back, redeemed by
    /// the backend at `/auth/access_token` exactly like a browser login's).
    func native(_ request: HTTPRequest) async -> HTTPResponse {
        let provider = request.parameter("provider").lowercased()
        let fields = RequestFields(request)
        guard let definition = context.providers.definition(provider) else {
            return .error(404, "not_found", "unknown provider '\(provider)'")
        }
        guard AppleSignIn.isApple(definition) || definition.carrier != nil else {
            return .error(400, "unsupported_provider", "\(provider) has no native sign-in in this version")
        }
        let caller: NativeCaller
        switch await nativeCaller(fields) {
        case .success(let found): caller = found
        case .failure(let refusal): return refusal.response
        }
        let app = caller.app
        guard let keyset = try? await context.registry.keyset(appKey: app.key, provider: provider) else {
            return .error(400, "invalid_request", "the app has no keyset for \(provider)")
        }
        if let carrier = definition.carrier {
            return await carrierSignIn(
                carrier, definition: definition, caller: caller, keyset: keyset, fields: fields, requestID: request.requestID)
        }
        guard let identityToken = fields["identity_token"] else { return .error(400, "invalid_request", "identity_token is required") }
        let code = fields["authorization_code"]
        do throws(AppleError) {
            let claims = try await apple.verify(
                identityToken, definition: definition, audiences: AppleSignIn.audiences(keyset.parameters), nonce: fields["nonce"],
                authorizationCode: code)
            try AppleSignIn.checkRealUserStatus(claims, keyset: keyset.parameters)
            var credentials: JSONObject = ["id_token": .string(identityToken)]
            if let code {
                credentials = try await exchangeNativeCode(code, claims: claims, definition: definition, keyset: keyset.parameters)
            }
            let offered = PersonName(appleUser: fields["user"]) ?? PersonName(first: fields["given_name"], last: fields["family_name"])
            let name = await rememberName(offered, appKey: app.key, subject: claims.sub ?? "")
            let profile = AppleSignIn.profile(claims, name: name)
            credentials["user"] = profile
            // Apple has no profile endpoint: `me` with Apple's access token answers from this
            // record; `me` with only the identity token verifies that token again instead.
            if let accessToken = credentials["access_token"]?.stringValue {
                let session = NativeSession(appKey: app.key, provider: provider, profile: profile)
                guard (try? await rememberNativeSession(session, token: accessToken)) != nil
                else { return .error(503, "store_unavailable", "the store is unavailable") }
            }
            return await deliverNative(credentials, to: caller, provider: provider)
        } catch {
            context.logger.notice("Native sign-in refused", ["provider.id": provider, "request.id": request.requestID, "error": error.reason])
            return .error(error.status, error.status == 401 ? "invalid_token" : (error.status == 502 ? "upstream_error" : "invalid_request"), error.reason)
        }
    }

    /// Exchanges a device's authorization code. The client_id is the identity token's
    /// audience (the bundle id the code was issued to), and no redirect_uri is sent.
    private func exchangeNativeCode(
        _ code: String, claims: JWTClaims, definition: ProviderDefinition, keyset: JSONObject
    ) async throws(AppleError) -> JSONObject {
        guard let oauth2 = definition.normalisedOAuth2 else { throw .configuration("the apple definition has no token endpoint") }
        let parameters = try await apple.prepared(keyset, definition: definition, clientID: claims.aud.first)
        let templates = TemplateContext(keyset: parameters, parameters: oauth2.parameters, flow: ["code": code])
        switch await exchangeCode(oauth2, templates: templates, provider: definition.id) {
        case .failure(let problem):
            throw AppleError(status: problem.rejectsCallerToken ? 400 : 502, reason: problem.message)
        case .success(var result):
            if let fresh = result["id_token"]?.stringValue {
                let renewed = try await apple.verify(
                    fresh, definition: definition, audiences: AppleSignIn.audiences(keyset), nonce: nil, authorizationCode: nil)
                guard renewed.sub == claims.sub else { throw .invalidToken("the exchanged token belongs to another user") }
            }
            result["scope"] = nil
            return result
        }
    }
}
