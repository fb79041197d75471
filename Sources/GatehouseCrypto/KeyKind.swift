/// What kind of asymmetric key a `PublicKey` or `PrivateKey` holds.
public enum KeyKind: Sendable, Hashable {
    /// An RSA key with a modulus of `bits` bits.
    case rsa(bits: Int)
    /// An ECDSA key on `curve`.
    case ec(EllipticCurve)

    /// Whether a key of this kind can make or check `algorithm` signatures.
    public func supports(_ algorithm: SignatureAlgorithm) -> Bool {
        switch self {
        case .rsa: algorithm.isRSA
        case .ec(let curve): algorithm.curve == curve
        }
    }
}

extension KeyKind: CustomStringConvertible {
    /// `RSA-2048` or `EC P-256`, for messages.
    public var description: String {
        switch self {
        case .rsa(let bits): "RSA-\(bits)"
        case .ec(let curve): "EC \(curve.rawValue)"
        }
    }
}
