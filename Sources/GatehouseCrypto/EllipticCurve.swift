/// The NIST curves accepted for ECDSA keys, by their JWK `crv` names.
public enum EllipticCurve: String, Sendable, Hashable, CaseIterable {
    /// P-256 (secp256r1), used by ES256 and Apple's .p8 keys.
    case p256 = "P-256"
    /// P-384 (secp384r1), used by ES384.
    case p384 = "P-384"

    /// The length in bytes of one coordinate, and of `r` and `s` in a JOSE signature.
    public var coordinateSize: Int {
        switch self {
        case .p256: 32
        case .p384: 48
        }
    }

    /// The name handed to OpenSSL when importing a point.
    var groupName: StaticString {
        switch self {
        case .p256: "P-256"
        case .p384: "P-384"
        }
    }

    /// Recognises the group names OpenSSL reports for a key, which use the SEC/X9.62 spelling.
    init?(openSSLGroupName name: String) {
        switch name {
        case "prime256v1", "secp256r1", "P-256": self = .p256
        case "secp384r1", "P-384": self = .p384
        default: return nil
        }
    }
}
