public import GatehouseCore
public import GatehouseCrypto

/// The protected header of a JWS (RFC 7515 §4), with the members this gateway acts on typed.
public struct JWSHeader: Sendable, Equatable {
    /// The signature algorithm; only ever one the caller allowed.
    public let alg: SignatureAlgorithm
    /// The key id that selects the verification key, if the issuer sent one.
    public let kid: String?
    /// The media type, such as `JWT`, if present.
    public let typ: String?
    /// The whole header object, for members not typed here.
    public let raw: JSONValue

    /// Reads a decoded header. `alg: none`, HMAC and anything outside `allowed` are refused,
    /// as are headers marked `crit`: no extension is understood here, and RFC 7515 §4.1.11
    /// requires refusing a token whose critical extensions are not.
    init(json bytes: [UInt8], allowed: some Collection<SignatureAlgorithm>) throws(JOSEError) {
        let (raw, name, kid, typ) = try Self.signedMembers(of: bytes)
        guard let alg = SignatureAlgorithm(rawValue: name), allowed.contains(alg) else {
            throw .unsupportedAlgorithm("alg \(JOSEError.printable(name)) is not allowed here")
        }
        self.alg = alg
        self.kid = kid
        self.typ = typ
        self.raw = raw
    }

    /// As `members(of:)`, refusing what no token may carry: `alg: none` and `crit`.
    static func signedMembers(of bytes: [UInt8]) throws(JOSEError) -> (JSONValue, alg: String, kid: String?, typ: String?) {
        let members = try members(of: bytes)
        guard members.alg != "none" else { throw .unsupportedAlgorithm("unsigned tokens (alg none) are never accepted") }
        guard members.0["crit"] == nil else { throw .malformed("the header has critical extensions (crit), none of which are supported") }
        return members
    }

    /// The header object and its `alg`, `kid` and `typ` members, type-checked.
    static func members(of bytes: [UInt8]) throws(JOSEError) -> (JSONValue, alg: String, kid: String?, typ: String?) {
        guard let raw = JSONValue.parse(bytes), raw.objectValue != nil else {
            throw .malformed("the header is not a JSON object")
        }
        guard let alg = raw["alg"]?.stringValue else { throw .malformed("the header has no alg string") }
        let kid = try optionalString(raw["kid"], "kid")
        let typ = try optionalString(raw["typ"], "typ")
        return (raw, alg, kid, typ)
    }

    private static func optionalString(_ value: JSONValue?, _ name: String) throws(JOSEError) -> String? {
        guard let value else { return nil }
        guard let text = value.stringValue else { throw .malformed("the header's \(name) is not a string") }
        return text
    }
}
