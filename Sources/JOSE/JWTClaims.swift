public import GatehouseCore

/// The registered claims of a JWT (RFC 7519 §4.1) plus the OpenID Connect ones the gateway
/// reads, with the raw payload kept for everything else.
public struct JWTClaims: Sendable, Equatable {
    /// Issuer.
    public let iss: String?
    /// Subject: the provider's stable user id.
    public let sub: String?
    /// Audiences; a single string in the token becomes a one-element array.
    public let aud: [String]
    /// Expiry, seconds since the epoch.
    public let exp: Int64?
    /// Issue time, seconds since the epoch.
    public let iat: Int64?
    /// Not-before time, seconds since the epoch.
    public let nbf: Int64?
    /// The OpenID Connect nonce echoed from the authorization request.
    public let nonce: String?
    /// The user's email address, if the provider shared it.
    public let email: String?
    /// Whether the provider verified `email`. Apple has sent the strings `"true"` and `"false"`
    /// and, since 2024, booleans (Apple, "Authenticating users with Sign in with Apple"); both
    /// are read, and anything else counts as unknown (nil), never as verified.
    public let emailVerified: Bool?
    /// The whole payload object.
    public let raw: JSONValue

    /// Reads the claims from a JWT payload. Throws `malformed` if the payload is not a JSON
    /// object or a registered claim has the wrong type.
    public init(payload: [UInt8]) throws(JOSEError) {
        guard let raw = JSONValue.parse(payload) else { throw .malformed("the payload is not valid JSON") }
        try self.init(json: raw)
    }

    /// Reads the claims from an already parsed payload object.
    public init(json raw: JSONValue) throws(JOSEError) {
        guard raw.objectValue != nil else { throw .malformed("the payload is not a JSON object") }
        iss = try Self.string(raw, "iss")
        sub = try Self.string(raw, "sub")
        nonce = try Self.string(raw, "nonce")
        email = try Self.string(raw, "email")
        exp = try Self.numericDate(raw, "exp")
        iat = try Self.numericDate(raw, "iat")
        nbf = try Self.numericDate(raw, "nbf")
        switch raw["aud"] {
        case nil: aud = []
        case .string(let single): aud = [single]
        case .array(let values):
            var audiences: [String] = []
            for value in values {
                guard let text = value.stringValue else { throw .malformed("aud holds a non-string") }
                audiences.append(text)
            }
            aud = audiences
        default: throw .malformed("aud is neither a string nor an array of strings")
        }
        emailVerified = Self.flag(raw["email_verified"])
        self.raw = raw
    }

    /// A boolean claim that some providers send as a string, such as Apple's
    /// `is_private_email`; nil when absent or neither form.
    public func flag(_ name: String) -> Bool? {
        Self.flag(raw[name])
    }

    private static func flag(_ value: JSONValue?) -> Bool? {
        switch value {
        case .bool(let flag): flag
        case .string("true"): true
        case .string("false"): false
        default: nil
        }
    }

    private static func string(_ raw: JSONValue, _ name: String) throws(JOSEError) -> String? {
        guard let value = raw[name] else { return nil }
        guard let text = value.stringValue else { throw .malformed("\(name) is not a string") }
        return text
    }

    /// RFC 7519 NumericDate: seconds, possibly fractional; fractions are dropped.
    private static func numericDate(_ raw: JSONValue, _ name: String) throws(JOSEError) -> Int64? {
        guard let value = raw[name] else { return nil }
        // Bounded well inside Int64 so the conversion cannot trap (±3×10^7 years).
        guard case .number(let seconds) = value, abs(seconds) < 1e15 else {
            throw .malformed("\(name) is not a NumericDate")
        }
        return Int64(seconds.rounded(.down))
    }
}
