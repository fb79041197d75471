/// An application registered with the gateway: its backend holds `secret`, its web or
/// mobile front end holds `key`, and logins may only start from `domains`.
public struct App: Sendable, Hashable, Codable {
    /// The public key (27-character base64url, as OAuth.io issues them).
    public var key: String
    /// A human name for listings.
    public var name: String
    /// The app secret in clear text. Only the registry holds it this way; stores keep it sealed.
    public var secret: String
    /// The origins and hosts a login may start from (OAuth.io's domain whitelist).
    public var domains: [String]
    /// Seconds since the Unix epoch.
    public var createdAt: Int64

    public init(key: String, name: String, secret: String, domains: [String], createdAt: Int64) {
        self.key = key
        self.name = name
        self.secret = secret
        self.domains = domains
        self.createdAt = createdAt
    }
}

/// What a login returns to the browser (OAuth.io's keyset `response_type`).
public enum ResponseType: String, Sendable, Hashable, Codable, CaseIterable {
    /// Tokens go straight to the front end.
    case token
    /// Only a one-time code goes to the front end; the backend redeems it (server-side only).
    case code
    /// Tokens to the front end, and a code when the app supplies its own state.
    case both
}

/// An app's credentials for one provider: client id, secret, scope and anything else the
/// provider definition declares as a parameter.
public struct Keyset: Sendable, Hashable, Codable {
    /// The provider id, as in `providers/<id>/`.
    public var provider: String
    /// Parameter values: strings, or arrays of strings for multi-valued ones such as scope.
    public var parameters: JSONObject
    /// What the login hands to the front end.
    public var responseType: ResponseType
    /// Seconds since the Unix epoch of the last change.
    public var updatedAt: Int64
    /// Whether the app's own device may sign in natively with the public key alone (`k` and
    /// `state`); when false only a backend holding the app secret may.
    public var deviceSignIn: Bool

    public init(provider: String, parameters: JSONObject, responseType: ResponseType, updatedAt: Int64, deviceSignIn: Bool = true) {
        self.provider = provider
        self.parameters = parameters
        self.responseType = responseType
        self.updatedAt = updatedAt
        self.deviceSignIn = deviceSignIn
    }
}
