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
        switch await nativeCaller(request, fields: fields, provider: provider) {
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
                identityToken, definition: definition, audiences: AppleSignIn.audiences(keyset.parameters),
                nonce: .signIn(fields["nonce"]), authorizationCode: code)
            try AppleSignIn.checkRealUserStatus(claims, keyset: keyset.parameters)
            let offered = try AppleSignIn.offeredName(
                user: fields["user"], givenName: fields["given_name"], familyName: fields["family_name"], claims: claims)
            var credentials = try await nativeCredentials(
                identityToken, code: code, fromDevice: caller.clientState != nil, appKey: app.key, claims: claims,
                definition: definition, keyset: keyset.parameters)
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
            return .error(error.status, Self.appleErrorCode(error.status), error.reason)
        }
    }

    private static func appleErrorCode(_ status: Int) -> String {
        switch status {
        case 401: "invalid_token"
        case 502: "upstream_error"
        case 503: "store_unavailable"
        default: "invalid_request"
        }
    }

    /// The credentials of a verified native sign-in: the identity token alone, or what Apple's
    /// code exchange gave. Apple takes a code once (apple.md §5), so the exchange is recorded
    /// for the code's five minutes and the same sign-in sent again, a client retrying after a
    /// lost answer, gets the same credentials; the first spends the token's sign-in.
    private func nativeCredentials(
        _ identityToken: String, code: String?, fromDevice: Bool, appKey: String, claims: JWTClaims,
        definition: ProviderDefinition, keyset: JSONObject
    ) async throws(AppleError) -> JSONObject {
        guard let code else {
            _ = try await spendSignIn(identityToken, claims: claims, fromDevice: fromDevice)
            return ["id_token": .string(identityToken)]
        }
        let exchangeID = "apple-code:" + Hex.encode(Digest.sha256(Array((appKey + "\u{0}" + code).utf8)))
        if let earlier = try? await readSealed(exchangeID), let record = JSONValue.parse(earlier),
            record["sub"]?.stringValue == claims.sub, let credentials = record["credentials"]?.objectValue
        {
            return credentials
        }
        let spent = try await spendSignIn(identityToken, claims: claims, fromDevice: fromDevice)
        let credentials: JSONObject
        do throws(AppleError) {
            credentials = try await exchangeNativeCode(code, claims: claims, definition: definition, keyset: keyset)
        } catch {
            // Apple was unreachable or failed: the same sign-in may be tried again.
            if error.status >= 500, let spent { _ = try? await context.store.takeRecord(spent) }
            throw error
        }
        let record = JSONValue.object(["sub": .string(claims.sub ?? ""), "credentials": .object(credentials)])
        _ = try? await putSealed(record.serialized(), id: exchangeID, ttlSeconds: 300)
        return credentials
    }

    /// Makes a verified token sign in once, until it expires (docs/apple.md, "Identity-token
    /// rules"): a token bound to a nonce spends its nonce, whichever path sends it; one without
    /// spends itself when the app sends it (`k` + `state`, no secret), while a backend holding
    /// the app's secret may present it again. Keyed by the token's own claim, not the request's
    /// nonce, which may be the raw value or its hash, and not by app: one sign-in, one use.
    /// Returns the record to release if the sign-in fails for reasons of Apple's own.
    private func spendSignIn(_ token: String, claims: JWTClaims, fromDevice: Bool) async throws(AppleError) -> String? {
        let id: String
        let refusal: String
        if let nonce = claims.nonce {
            id = "apple-nonce:" + Hex.encode(Digest.sha256(Array(nonce.utf8)))
            refusal = "the nonce was already used"
        } else if fromDevice {
            id = "apple-token:" + Hex.encode(Digest.sha256(Array(token.utf8)))
            refusal = "the identity token was already used to sign in"
        } else {
            return nil
        }
        let remaining = (claims.exp ?? 0) - Timestamp.now() + AppleSignIn.leeway
        let fresh: Bool
        do throws(StoreError) {
            fresh = try await context.store.putRecord(id, value: [1], ttlSeconds: Int(max(60, remaining)))
        } catch {
            throw AppleError(status: 503, reason: "the store is unavailable")
        }
        guard fresh else { throw .invalidToken(refusal) }
        return id
    }

    /// Exchanges a device's authorization code. The client_id is the identity token's
    /// audience (the bundle id the code was issued to), and no redirect_uri is sent.
    private func exchangeNativeCode(
        _ code: String, claims: JWTClaims, definition: ProviderDefinition, keyset: JSONObject
    ) async throws(AppleError) -> JSONObject {
        guard let oauth2 = definition.normalisedOAuth2 else { throw .configuration("the apple definition has no token endpoint") }
        // The audience the token was accepted for (verification found one): a code is issued
        // to one bundle id.
        let audiences = AppleSignIn.audiences(keyset)
        let client = claims.aud.first(where: audiences.contains)
        let parameters = try await apple.prepared(keyset, definition: definition, clientID: client)
        let templates = TemplateContext(keyset: parameters, parameters: oauth2.parameters, flow: ["code": code])
        switch await exchangeCode(oauth2, templates: templates, provider: definition.id) {
        case .failure(let problem):
            if problem.refusesClient { await apple.forgetSecret(parameters, definition: definition) }
            throw AppleError(status: problem.rejectsCallerToken ? 400 : 502, reason: problem.message)
        case .success(var result):
            if let fresh = result["id_token"]?.stringValue {
                let renewed = try await apple.verify(
                    fresh, definition: definition, audiences: AppleSignIn.audiences(keyset), nonce: .notCompared,
                    authorizationCode: nil)
                guard renewed.sub == claims.sub else { throw .invalidToken("the exchanged token belongs to another user") }
            }
            result["scope"] = nil
            return result
        }
    }
}
