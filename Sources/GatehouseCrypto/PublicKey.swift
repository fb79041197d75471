internal import COpenSSL

/// A public key for checking signatures: RSA, or ECDSA on P-256/P-384.
///
/// Building a key costs tens of microseconds, verifying with it far less, so build once per
/// key id and share the instance: it is immutable, and every verification works on its own
/// copy of a prepared OpenSSL context, so any number of threads may use it at once.
public final class PublicKey: @unchecked Sendable {
    // @unchecked: owns an `EVP_PKEY` and prepared contexts that are never modified after
    // init. OpenSSL 3 allows concurrent verification with one key as long as each thread has
    // its own EVP_MD_CTX, which `verify` copies per call from the prepared ones.

    let key: OpaquePointer
    let contexts: VerificationContexts
    /// The key type and size.
    public let kind: KeyKind

    /// An RSA key from its big-endian modulus and public exponent (JWK `n` and `e`).
    /// Moduli outside 2048...8192 bits and exponents below 3 or even are refused.
    public convenience init(rsaModulus modulus: [UInt8], exponent: [UInt8]) throws(CryptoError) {
        try self.init(owning: KeyImport.rsaPublicKey(modulus: modulus, exponent: exponent))
    }

    /// An ECDSA key from its affine coordinates (JWK `x` and `y`), each exactly
    /// `curve.coordinateSize` bytes. Points not on the curve are refused.
    public convenience init(curve: EllipticCurve, x: [UInt8], y: [UInt8]) throws(CryptoError) {
        try self.init(owning: KeyImport.ecPublicKey(curve: curve, x: x, y: y))
    }

    /// A key from a DER-encoded SubjectPublicKeyInfo.
    public convenience init(spkiDER der: [UInt8]) throws(CryptoError) {
        try self.init(owning: KeyImport.publicKey(spki: der))
    }

    /// A key from a PEM `-----BEGIN PUBLIC KEY-----` block.
    public convenience init(pem: String) throws(CryptoError) {
        try self.init(owning: KeyImport.publicKey(pem: pem))
    }

    /// Takes ownership of `key`, freeing it if it is of an unsupported kind.
    init(owning key: OpaquePointer) throws(CryptoError) {
        self.kind = try KeyImport.checkedKind(of: key)
        self.key = key
        self.contexts = VerificationContexts(key: key, kind: kind)
    }

    deinit {
        // The prepared contexts hold their own references to the key, so dropping ours first
        // is safe; they are freed when `contexts` goes.
        EVP_PKEY_free(key)
    }

    /// Whether this key can check `algorithm` signatures.
    public func supports(_ algorithm: SignatureAlgorithm) -> Bool {
        kind.supports(algorithm)
    }
}
