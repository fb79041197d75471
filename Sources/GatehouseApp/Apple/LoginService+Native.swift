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
        guard AppleSignIn.isApple(definition) else {
            return .error(400, "unsupported_provider", "\(provider) has no native sign-in in this version")
        }
        let app: App
        let clientState: String?
        if let key = fields["key"], let secret = fields["secret"] {
            guard let authenticated = try? await context.registry.authenticate(key: key, secret: secret) else {
                return .error(401, "invalid_client", "invalid credentials")
            }
            app = authenticated
            clientState = nil
        } else if let key = fields["k"], let state = fields["state"] {
            guard state.utf8.count <= 512 else { return .error(400, "invalid_request", "state is too long") }
            guard let found = try? await context.registry.app(key: key) else { return .error(401, "invalid_client", "unknown public key") }
            app = found
            clientState = state
        } else {
            return .error(400, "invalid_request", "send key and secret (from a backend) or k and state (from the app)")
        }
        guard let keyset = try? await context.registry.keyset(appKey: app.key, provider: provider) else {
            return .error(400, "invalid_request", "the app has no keyset for \(provider)")
        }
        guard let identityToken = fields["identity_token"] else { return .error(400, "invalid_request", "identity_token is required") }
        let code = fields["authorization_code"]
        do throws(AppleError) {
            let claims = try await apple.verify(
                identityToken, definition: definition, audiences: AppleSignIn.audiences(keyset.parameters), nonce: fields["nonce"],
                authorizationCode: code)
            var credentials: [String: JSONValue] = ["id_token": .string(identityToken)]
            if let code {
                credentials = try await exchangeNativeCode(code, claims: claims, definition: definition, keyset: keyset.parameters)
            }
            let offered = PersonName(appleUser: fields["user"]) ?? PersonName(first: fields["given_name"], last: fields["family_name"])
            let name = await rememberName(offered, appKey: app.key, subject: claims.sub ?? "")
            let profile = AppleSignIn.profile(claims, name: name)
            credentials["user"] = profile
            // Apple has no profile endpoint: `me` answers from this record, found by the
            // access token when a code was exchanged, else by the identity token.
            let sessionToken = credentials["access_token"]?.stringValue ?? identityToken
            guard (try? await rememberNativeSession(
                NativeSession(appKey: app.key, provider: provider, profile: profile), token: sessionToken)) != nil
            else { return .error(503, "store_unavailable", "the store is unavailable") }
            guard let clientState else {
                credentials["provider"] = .string(provider)
                return .json(JSONValue.object(credentials))
            }
            guard let oneTime = try? SecureRandom.identifier(), case let bytes = LoginCode(
                appKey: app.key, provider: provider, clientState: clientState, result: credentials).record
            else { return .error(500, "server_error", "internal error") }
            guard (try? await putSealed(bytes, id: LoginRecordID.code(oneTime), ttlSeconds: context.configuration.codeTTL)) == true
            else { return .error(503, "store_unavailable", "the store is unavailable") }
            return .json(JSONValue.object([
                "status": "success", "data": .object(["code": .string(oneTime)]), "state": .string(clientState), "provider": .string(provider),
            ]))
        } catch {
            context.logger.notice("Native sign-in refused", ["provider.id": provider, "request.id": request.requestID, "error": error.reason])
            return .error(error.status, error.status == 401 ? "invalid_token" : (error.status == 502 ? "upstream_error" : "invalid_request"), error.reason)
        }
    }

    /// Exchanges a device's authorization code. The client_id is the identity token's
    /// audience (the bundle id the code was issued to), and no redirect_uri is sent.
    private func exchangeNativeCode(
        _ code: String, claims: JWTClaims, definition: ProviderDefinition, keyset: [String: JSONValue]
    ) async throws(AppleError) -> [String: JSONValue] {
        guard let oauth2 = definition.normalisedOAuth2 else { throw .configuration("the apple definition has no token endpoint") }
        let parameters = try await apple.prepared(keyset, definition: definition, clientID: claims.aud.first)
        let templates = TemplateContext(keyset: parameters, parameters: oauth2.parameters, flow: ["code": code])
        switch await exchangeCode(oauth2, templates: templates, provider: definition.id) {
        case .failure(let problem):
            throw AppleError(status: problem.data["error"] == "invalid_grant" ? 400 : 502, reason: problem.message)
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
