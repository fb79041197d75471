internal import GatehouseCore
internal import GatehouseCrypto
internal import HTTPClient
internal import HTTPServer
internal import ProviderEngine

extension LoginService {
    /// `POST /auth/access_token`: an app backend trades a one-time code, with its key and
    /// secret, for the stored credentials. The credentials are checked before the code is
    /// consumed, and the code is filed under its app, so neither a wrong secret nor another
    /// app's key can burn it; the take itself is atomic, so of two racing redemptions exactly
    /// one succeeds. A caller without the secret learns nothing about the code.
    func redeem(_ request: HTTPRequest) async -> HTTPResponse {
        let fields = RequestFields(request)
        for name in ["code", "key", "secret"] {
            guard let value = fields[name], AppRegistry.isIdentifier(value) else { return JSend.fail(400, field: name, "invalid format") }
        }
        guard let code = fields["code"], let key = fields["key"], let secret = fields["secret"] else {
            return JSend.fail(400, field: "code", "missing")
        }
        do throws(RegistryError) {
            guard try await context.registry.authenticate(key: key, secret: secret) != nil else {
                return JSend.error(401, "invalid credentials")
            }
        } catch {
            return JSend.error(503, "The store is unavailable")
        }
        let taken: [UInt8]?
        do throws(StoreError) {
            taken = try await takeSealed(LoginRecordID.code(code, appKey: key))
        } catch {
            return JSend.error(503, "The store is unavailable")
        }
        guard let taken, let pending = LoginCode(record: taken), pending.appKey == key else {
            return JSend.fail(400, field: "code", "invalid or expired")
        }
        return .jsonBytes(pending.answer)
    }

    /// `POST /auth/refresh_token/:provider`: a backend renews an access token.
    func refresh(_ request: HTTPRequest) async -> HTTPResponse {
        let provider = request.parameter("provider").lowercased()
        let fields = RequestFields(request)
        for name in ["key", "secret"] {
            guard let value = fields[name], AppRegistry.isIdentifier(value) else { return JSend.fail(400, field: name, "invalid format") }
        }
        guard let key = fields["key"], let secret = fields["secret"], let token = fields["token"], token.utf8.count <= 4096 else {
            return JSend.fail(400, field: "token", "missing")
        }
        guard await authenticated(key: key, secret: secret) else { return JSend.error(401, "invalid credentials") }
        guard let definition = context.providers.definition(provider) else { return JSend.error(404, "Unknown provider '\(provider)'") }
        guard let oauth2 = definition.normalisedOAuth2, let endpoint = oauth2.refresh else {
            return JSend.error(400, "refresh token not supported for \(provider)")
        }
        let keyset: Keyset?
        do throws(RegistryError) {
            keyset = try await context.registry.keyset(appKey: key, provider: provider)
        } catch {
            return JSend.error(error.status, error.reason)
        }
        guard let keyset else { return JSend.error(400, "The app has no keyset for \(provider)") }
        var parameters = keyset.parameters
        var appleCheck: AppleTokenRecords?
        if AppleSignIn.isApple(definition) {
            let requested = fields["client_id"]
            let records = AppleTokenRecords(token: token, clientID: requested ?? AppleSignIn.webClientID(parameters), appKey: key)
            if (try? await context.store.record(records.revoked)) != nil {
                return JSend.fail(400, field: "token", "the refresh token was revoked")
            }
            // Apple throttles refresh-token checks done more than once a day (apple.md §5):
            // answer from the last check while it is less than a day old.
            if let cached = try? await readSealed(records.checked), let body = JSONValue.parse(cached) {
                return .json(body)
            }
            appleCheck = records
            do throws(AppleError) {
                parameters = try await apple.prepared(parameters, definition: definition, clientID: requested)
            } catch {
                return JSend.error(error.status, error.reason)
            }
        }
        // `token` too: Facebook's refresh is an `fb_exchange_token` of the current access token.
        // `callback` for providers that want the redirect URI again (Kommo, Xiaomi); a login's own
        // `?state=` suffix is long gone, so it is the plain callback URL.
        var flow = ["refresh_token": token, "token": token, "callback": callbackURL]
        // A refresh endpoint on a login-named host (Kommo's account domain) takes it from the request.
        for name in endpoint.learnedHostFields { if let value = fields[name] { flow[name] = value } }
        let templates = TemplateContext(keyset: parameters, parameters: oauth2.parameters, flow: flow)
        let url: String
        switch EndpointRequest.url(endpoint, context: templates, provider: provider, source: "request") {
        case .failure(let refusal): return JSend.error(400, refusal.message)
        case .success(let rendered): url = rendered
        }
        func refreshRequest(nonce: String?) throws(ClientAssertionError) -> HTTPClientRequest {
            try tokenEndpointRequest(endpoint, oauth2: oauth2, url: url, templates: templates, token: token, nonce: nonce)
        }
        let outboundRequest: HTTPClientRequest
        do throws(ClientAssertionError) { outboundRequest = try refreshRequest(nonce: nil) } catch {
            return JSend.error(400, "Cannot authenticate the app to \(provider): \(error.reason)")
        }
        // Apple answers per client id, so racing calls under two of them share nothing.
        let client = appleCheck == nil ? "" : "\u{0}" + (parameters["client_id"]?.stringValue ?? "")
        let flight = "refresh:" + Hex.encode(Digest.sha256(Array((key + "\u{0}" + provider + "\u{0}" + token + client).utf8)))
        return await singleFlight(flight) { () async -> RefreshOutcome in
            switch await tokenCall(outboundRequest, endpoint: endpoint, step: "refresh", extra: [], provider: provider, renew: { try? refreshRequest(nonce: $0) }) {
            case .failure(let problem):
                if let appleCheck {
                    // invalid_grant on a refresh means the user or the app revoked it (apple.md §5):
                    // remember that rather than ask Apple again.
                    if problem.rejectsCallerToken { await markRevoked(appleCheck) }
                    if problem.refusesClient { await apple.forgetSecret(parameters, definition: definition) }
                }
                let body = JSONValue.object(["status": "error", "message": .string(problem.message), "data": problem.data])
                return .failed(.json(body, status: problem.rejectsCallerToken ? 400 : 502))
            case .success(var result):
                result["id_token"] = nil
                result["scope"] = nil
                if result["expires_in"] == nil { result["expires_in"] = .number(3600) }
                if let appleCheck, case let bytes = JSONValue.object(result).serialized() {
                    _ = try? await putSealed(bytes, id: appleCheck.checked, ttlSeconds: 86_400)
                }
                return .refreshed(JSONValue.object(result))
            }
        }
    }

    /// Runs `refresh` for one token at a time across every instance sharing the store. The
    /// lock is a record written with put-if-absent (SET NX EX on Redis); the winner shares
    /// its answer, sealed, for a short while, so callers that lost the race get the same new
    /// tokens instead of refreshing again: with a provider that rotates refresh tokens, a
    /// second refresh of the old token would fail. If the winner fails, the lock is released
    /// and the next caller tries for itself.
    func singleFlight(_ id: String, refresh: () async -> RefreshOutcome) async -> HTTPResponse {
        let lock = id + ":lock"
        let shared = id + ":result"
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(Self.refreshLockSeconds)
        while clock.now < deadline {
            do throws(StoreError) {
                if let done = try await readSealed(shared), let body = JSONValue.parse(done) { return .json(body) }
                if try await context.store.putRecord(lock, value: [1], ttlSeconds: Self.refreshLockSeconds) {
                    // The previous holder may have shared its answer and let go between our
                    // two reads: look again before refreshing an already rotated token.
                    if let done = try await readSealed(shared), let body = JSONValue.parse(done) {
                        _ = try? await context.store.takeRecord(lock)
                        return .json(body)
                    }
                    let outcome = await refresh()
                    if case .refreshed(let body) = outcome {
                        _ = try? await putSealed(body.serialized(), id: shared, ttlSeconds: Self.refreshShareSeconds)
                    }
                    _ = try? await context.store.takeRecord(lock)
                    switch outcome {
                    case .refreshed(let body): return .json(body)
                    case .failed(let response): return response
                    }
                }
            } catch {
                return JSend.error(503, "The store is unavailable")
            }
            try? await Task.sleep(for: .milliseconds(25))
        }
        return JSend.error(503, "Another refresh of this token did not finish")
    }

    /// How long a refresh may hold its lock (a crashed holder's lock lapses after this).
    static let refreshLockSeconds = 30
    /// How long the new tokens are handed to callers that raced the winner.
    static let refreshShareSeconds = 30

    /// `POST /auth/revoke/:provider` (interface.md §3): revokes a token upstream where the
    /// provider supports it. Apple answers 200 even for junk tokens, so a 200 here means only
    /// that Apple accepted the request.
    func revoke(_ request: HTTPRequest) async -> HTTPResponse {
        let provider = request.parameter("provider").lowercased()
        let fields = RequestFields(request)
        guard let key = fields["key"], let secret = fields["secret"], await authenticated(key: key, secret: secret) else {
            return .error(401, "invalid_client", "invalid credentials")
        }
        guard let token = fields["token"], token.utf8.count <= 4096 else { return .error(400, "invalid_request", "token is required") }
        guard let definition = context.providers.definition(provider) else { return .error(404, "not_found", "unknown provider '\(provider)'") }
        guard let oauth2 = definition.normalisedOAuth2, let endpoint = oauth2.revoke else {
            return .error(400, "unsupported_provider", "\(provider) has no revocation endpoint")
        }
        guard var parameters = (try? await context.registry.keyset(appKey: key, provider: provider))??.parameters else {
            return .error(400, "invalid_request", "the app has no keyset for \(provider)")
        }
        let isApple = AppleSignIn.isApple(definition)
        if isApple {
            do throws(AppleError) {
                parameters = try await apple.prepared(parameters, definition: definition, clientID: fields["client_id"])
            } catch {
                return .error(error.status, "invalid_request", error.reason)
            }
        }
        var flow = ["token": token]
        if let hint = fields["token_type_hint"], ["access_token", "refresh_token"].contains(hint) { flow["token_type_hint"] = hint }
        // Apple's hint defaults to the refresh token, the one worth revoking (apple.md §1).
        if isApple, flow["token_type_hint"] == nil { flow["token_type_hint"] = "refresh_token" }
        for name in endpoint.learnedHostFields { if let value = fields[name] { flow[name] = value } }
        let templates = TemplateContext(keyset: parameters, parameters: oauth2.parameters, flow: flow)
        let url: String
        switch EndpointRequest.url(endpoint, context: templates, provider: provider, source: "request") {
        case .failure(let refusal): return .error(400, "invalid_request", refusal.message)
        case .success(let rendered): url = rendered
        }
        let revocation: HTTPClientRequest
        do throws(ClientAssertionError) {
            revocation = try tokenEndpointRequest(endpoint, oauth2: oauth2, url: url, templates: templates, token: token)
        } catch {
            return .error(400, "invalid_request", "Cannot authenticate the app to \(provider): \(error.reason)")
        }
        do {
            let response = try await outbound.execute(revocation)
            guard (200..<300).contains(response.status) else {
                context.metrics.upstream.increment(provider, "revoke", "error")
                let data = TokenResponse.errorData(TokenResponse.fields(of: response, endpoint: endpoint))
                if isApple, TokenResponse.refusesClient(data) { await apple.forgetSecret(parameters, definition: definition) }
                let reason = TokenResponse.reason(data, status: response.status)
                if TokenResponse.rejectsCallerToken(data) {
                    return .error(400, "invalid_token", "the provider does not accept this token (\(reason))")
                }
                return .error(502, "upstream_error", "the provider refused the revocation (\(reason))")
            }
            context.metrics.upstream.increment(provider, "revoke", "ok")
            // Apple answers 200 to any token, so a refresh token named here is refused from now
            // on, without asking Apple, and its day-old check no longer answers for it.
            if isApple, flow["token_type_hint"] == "refresh_token" {
                let clientID = parameters["client_id"]?.stringValue ?? ""
                await markRevoked(AppleTokenRecords(token: token, clientID: clientID, appKey: key))
            }
            // A revoked access token no longer finds the profile its sign-in left for `me`.
            if flow["token_type_hint"] == "access_token" { _ = try? await context.store.takeRecord(NativeSession.recordID(token: token)) }
            return .json(JSONValue.object(["revoked": true, "provider": .string(provider)]))
        } catch {
            context.metrics.upstream.increment(provider, "revoke", "unreachable")
            return .error(504, "upstream_unreachable", "the provider did not answer")
        }
    }

    /// Facebook's `appsecret_proof` (the definition's `token_proof`) on a call carrying `token`.
    static func addTokenProof(_ oauth2: OAuth2Definition, keyset: JSONObject, token: String, to request: inout HTTPClientRequest) {
        guard let proof = oauth2.tokenProof, proof.isEnabled(keyset) else { return }
        request.url += (request.url.utf8.contains(UInt8(ascii: "?")) ? "&" : "?") + APICaller.proof(proof, keyset: keyset, token: token)
    }

    /// Refuses an Apple refresh token from now on; best effort, as Apple refuses it anyway.
    private func markRevoked(_ records: AppleTokenRecords) async {
        _ = try? await context.store.putRecord(records.revoked, value: [1], ttlSeconds: AppleTokenRecords.revokedSeconds)
        _ = try? await context.store.takeRecord(records.checked)
    }

    private func authenticated(key: String, secret: String) async -> Bool {
        (try? await context.registry.authenticate(key: key, secret: secret)) != nil
    }
}

/// What one refresh attempt produced: credentials to share, or the answer for this caller only.
enum RefreshOutcome: Sendable {
    case refreshed(JSONValue)
    case failed(HTTPResponse)
}

/// The store records kept about one Apple refresh token, named by its SHA-256 so the token
/// itself is never a key.
struct AppleTokenRecords: Sendable {
    /// The last successful check's answer, reused for a day by the app and client id that
    /// made it only: another app presenting the token gets Apple's answer to its own
    /// credentials, never the tokens Apple gave the first.
    let checked: String
    /// Present once the token is known to be revoked. Per client id: Apple also answers
    /// invalid_grant to a valid token refreshed under the wrong client id, which must not
    /// lock the token out under its own.
    let revoked: String

    /// A revoked refresh token never comes back; the record only has to outlive its callers.
    static let revokedSeconds = 90 * 86_400

    init(token: String, clientID: String, appKey: String) {
        checked = "apple-refresh:" + Hex.encode(Digest.sha256(Array((appKey + "\u{0}" + clientID + "\u{0}" + token).utf8)))
        revoked = "apple-revoked:" + Hex.encode(Digest.sha256(Array((clientID + "\u{0}").utf8) + Array(token.utf8)))
    }
}
