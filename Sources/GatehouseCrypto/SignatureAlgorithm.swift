/// The JWS signature algorithms (RFC 7518 §3) that keys here can verify, by their JOSE names.
public enum SignatureAlgorithm: String, Sendable, Hashable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 with SHA-256, what Apple, Google and most OpenID providers use.
    case rs256 = "RS256"
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    case rs384 = "RS384"
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    case rs512 = "RS512"
    /// RSASSA-PSS with SHA-256 and MGF1-SHA-256, salt as long as the hash.
    case ps256 = "PS256"
    /// RSASSA-PSS with SHA-384.
    case ps384 = "PS384"
    /// RSASSA-PSS with SHA-512.
    case ps512 = "PS512"
    /// ECDSA on P-256 with SHA-256; signatures are the 64-byte `r ‖ s`, not DER.
    case es256 = "ES256"
    /// ECDSA on P-384 with SHA-384; signatures are the 96-byte `r ‖ s`.
    case es384 = "ES384"

    /// The curve an ECDSA algorithm is defined over, nil for the RSA algorithms.
    public var curve: EllipticCurve? {
        switch self {
        case .es256: .p256
        case .es384: .p384
        default: nil
        }
    }

    /// True for the RSA algorithms, PKCS#1 v1.5 and PSS alike.
    public var isRSA: Bool { curve == nil }

    var usesPSS: Bool {
        switch self {
        case .ps256, .ps384, .ps512: true
        default: false
        }
    }

    /// The position in `allCases`, for per-algorithm tables.
    var ordinal: Int {
        switch self {
        case .rs256: 0
        case .rs384: 1
        case .rs512: 2
        case .ps256: 3
        case .ps384: 4
        case .ps512: 5
        case .es256: 6
        case .es384: 7
        }
    }

    var digest: FetchedDigest {
        switch self {
        case .rs256, .ps256, .es256: .sha256
        case .rs384, .ps384, .es384: .sha384
        case .rs512, .ps512: .sha512
        }
    }
}
