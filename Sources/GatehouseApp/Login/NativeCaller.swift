internal import GatehouseCore
internal import GatehouseCrypto
internal import HTTPServer

/// Who called `POST /auth/:provider/native`: an app backend (`key` + `secret`, the result
/// comes back whole) or the app itself (`k` + `state`, a one-time code comes back). Shared by
/// every native kind (Apple, carrier one-click) so both authenticate and deliver alike.
struct NativeCaller: Sendable {
    let app: App
    /// The app's state in app mode; nil when a backend called with its secret.
    let clientState: String?
}

extension LoginService {
    /// The caller, or the error response that refuses it. A call with only the public key
    /// spends a provider call for whoever holds that key, which any page or app binary shows:
    /// it must come from a page the app lists (when it names one), the app must allow it for
    /// the provider, and it passes the rate limits.
    func nativeCaller(_ request: HTTPRequest, fields: RequestFields, provider: String) async -> Result<NativeCaller, NativeRefusal> {
        if let key = fields["key"], let secret = fields["secret"] {
            guard let app = try? await context.registry.authenticate(key: key, secret: secret) else {
                return .failure(NativeRefusal(.error(401, "invalid_client", "invalid credentials")))
            }
            if let refusal = refusedOrigin(request, app: app) { return .failure(refusal) }
            return .success(NativeCaller(app: app, clientState: nil))
        }
        if let key = fields["k"], let state = fields["state"] {
            guard state.utf8.count <= 512 else { return .failure(NativeRefusal(.error(400, "invalid_request", "state is too long"))) }
            guard let app = try? await context.registry.app(key: key) else {
                return .failure(NativeRefusal(.error(401, "invalid_client", "unknown public key")))
            }
            if let refusal = refusedOrigin(request, app: app) { return .failure(refusal) }
            if let keyset = try? await context.registry.keyset(appKey: app.key, provider: provider), !keyset.deviceSignIn {
                return .failure(NativeRefusal(.error(
                    403, "device_sign_in_off", "the app signs in to \(provider) from its backend only: send key and secret")))
            }
            if let refusal = await RateLimits(context: context).admit(.native, appKey: app.key, request: request) {
                return .failure(NativeRefusal(refusal.response))
            }
            return .success(NativeCaller(app: app, clientState: state))
        }
        if fields.isMalformedJSON {
            return .failure(NativeRefusal(.error(400, "invalid_request", "the body is labelled JSON but is not a JSON object")))
        }
        return .failure(NativeRefusal(.error(400, "invalid_request", "send key and secret (from a backend) or k and state (from the app)")))
    }

    /// A browser's call names its page in `Origin`: that page must be on the app's whitelist.
    private func refusedOrigin(_ request: HTTPRequest, app: App) -> NativeRefusal? {
        guard let text = request.headers["origin"] else { return nil }
        guard let page = WebURL(text, assumeHTTP: true), DomainCheck(domains: app.domains, gateway: context.gateway).allowsPage(page)
        else { return NativeRefusal(.error(403, "origin_not_allowed", "the Origin does not match any registered domain")) }
        return nil
    }

    /// Hands a native sign-in's credentials to the caller: whole (with `provider`) to a
    /// backend, or stored under a one-time code the backend redeems at `/auth/access_token`.
    func deliverNative(_ credentials: JSONObject, to caller: NativeCaller, provider: String) async -> HTTPResponse {
        guard let clientState = caller.clientState else {
            return .jsonBytes(JSONValue.serializedObject(credentials, adding: [("provider", .string(provider))]))
        }
        guard let oneTime = try? SecureRandom.identifier(), case let bytes = LoginCode(
            appKey: caller.app.key, provider: provider, clientState: clientState, result: credentials).record
        else { return .error(500, "server_error", "internal error") }
        let id = LoginRecordID.code(oneTime, appKey: caller.app.key)
        guard (try? await putSealed(bytes, id: id, ttlSeconds: context.configuration.codeTTL, oneTime: true)) == true
        else { return .error(503, "store_unavailable", "the store is unavailable") }
        return .json(JSONValue.object([
            "status": "success", "data": .object(["code": .string(oneTime)]), "state": .string(clientState), "provider": .string(provider),
        ]))
    }
}

/// A refused native call, as the response to send.
struct NativeRefusal: Error {
    let response: HTTPResponse

    init(_ response: HTTPResponse) {
        self.response = response
    }
}
