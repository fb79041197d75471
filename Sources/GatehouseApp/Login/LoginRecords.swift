internal import GatehouseCore

/// A login in progress, stored under its state id for 20 minutes and taken exactly once by
/// the provider callback. It never holds a client secret: the callback reads the keyset again.
struct LoginState: Codable, Sendable {
    var appKey: String
    var provider: String
    var version: String
    /// The page origin that started the flow: where the result may be posted.
    var origin: String
    var redirectURI: String?
    /// `server` asks for a 302 back to `redirectURI` with `?oauthio=`.
    var redirectType: String?
    var mobile: Bool
    /// The app's own state (`opts.state`), echoed back in the result.
    var clientState: String?
    /// True when the SDK made the state itself (`opts.state_type == "client"`): tokens go
    /// straight to the browser and no code is issued.
    var clientMode: Bool
    var responseType: ResponseType
    var codeVerifier: String?
    var nonce: String?
    /// OAuth 1.0a: the request token's secret, needed to sign the access-token call.
    var requestTokenSecret: String?
    /// Values the provider sent to the callback that later templates need (`authorize.extra`).
    var scopeOverride: String?
    var createdAt: Int64

    enum CodingKeys: String, CodingKey {
        case appKey = "key", provider, version, origin, mobile, nonce
        case redirectURI = "redirect_uri", redirectType = "redirect_type", clientState = "state"
        case clientMode = "client_mode", responseType = "response_type", codeVerifier = "code_verifier"
        case requestTokenSecret = "request_token_secret", scopeOverride = "scope", createdAt = "created_at"
    }
}

/// A finished server-side login waiting for the app backend to redeem its one-time code.
struct LoginCode: Codable, Sendable {
    var appKey: String
    var provider: String
    var clientState: String?
    /// The credentials, refresh token included, exactly as `/auth/access_token` returns them.
    var result: [String: JSONValue]

    enum CodingKeys: String, CodingKey {
        case appKey = "key", provider, result
        case clientState = "state"
    }
}

/// Record ids in the shared store, namespaced so states and codes cannot be confused.
enum LoginRecordID {
    static func state(_ id: String) -> String { "st:" + id }
    static func code(_ id: String) -> String { "code:" + id }
}
