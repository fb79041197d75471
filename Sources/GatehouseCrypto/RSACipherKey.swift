internal import COpenSSL

/// An RSA key for encryption: the PKCS#1 v1.5 encryption and signatures of carrier one-click
/// vendors, which hand out or accept 1024-bit keys (unlike `PublicKey`/`PrivateKey`, JOSE's
/// signing keys of 2048 bits and up, this accepts 1024...8192-bit moduli), and the OAEP key
/// transport of JWE.
public final class RSACipherKey: @unchecked Sendable {
    // @unchecked: owns an `EVP_PKEY` never modified after init; each operation makes its own
    // EVP_PKEY_CTX, which OpenSSL 3 allows concurrently on one key.

    private let key: OpaquePointer
    /// True when the private half is present (decrypt and sign work).
    public let isPrivate: Bool
    /// The modulus size in bits.
    public let bits: Int

    /// A private key from PEM: PKCS#8 `PRIVATE KEY` or PKCS#1 `RSA PRIVATE KEY`.
    public convenience init(privatePEM pem: String) throws(CryptoError) {
        try self.init(owning: KeyImport.privateKey(pem: pem), isPrivate: true)
    }

    /// A public key from a PEM `PUBLIC KEY` block.
    public convenience init(publicPEM pem: String) throws(CryptoError) {
        try self.init(owning: KeyImport.publicKey(pem: pem), isPrivate: false)
    }

    /// A public key from its big-endian modulus and exponent (JWK `n` and `e`): a provider's
    /// published encryption key, which JWE key transport wraps content keys for.
    public convenience init(rsaModulus modulus: [UInt8], exponent: [UInt8]) throws(CryptoError) {
        try self.init(owning: KeyImport.rsaPublicKey(modulus: modulus, exponent: exponent), isPrivate: false)
    }

    private init(owning key: OpaquePointer, isPrivate: Bool) throws(CryptoError) {
        guard EVP_PKEY_is_a(key, "RSA") == 1 else {
            EVP_PKEY_free(key)
            throw .invalidKey("not an RSA key")
        }
        let bits = Int(EVP_PKEY_get_bits(key))
        guard (1024...8192).contains(bits) else {
            EVP_PKEY_free(key)
            throw .invalidKey("RSA modulus of \(bits) bits is outside 1024...8192")
        }
        self.key = key
        self.isPrivate = isPrivate
        self.bits = bits
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// How a message is padded for RSA encryption (RFC 8017 §7).
    public enum Padding: Sendable {
        /// RSAES-PKCS1-v1_5, which carrier vendors use.
        case pkcs1
        /// RSAES-OAEP with SHA-1 and MGF1-SHA-1 (JOSE's `RSA-OAEP`).
        case oaepSHA1
        /// RSAES-OAEP with SHA-256 and MGF1-SHA-256 (JOSE's `RSA-OAEP-256`).
        case oaepSHA256
    }

    /// RSA encryption with `padding`, PKCS#1 v1.5 by default (RFC 8017 §7.2.1).
    public func encrypt(_ plaintext: [UInt8], padding: Padding = .pkcs1) throws(CryptoError) -> [UInt8] {
        try crypt(plaintext, encrypting: true, padding: padding)
    }

    /// RSA decryption with `padding`, PKCS#1 v1.5 by default; needs the private key.
    public func decrypt(_ ciphertext: [UInt8], padding: Padding = .pkcs1) throws(CryptoError) -> [UInt8] {
        guard isPrivate else { throw .invalidKey("decryption needs the private key") }
        return try crypt(ciphertext, encrypting: false, padding: padding)
    }

    /// RSASSA-PKCS1-v1_5 over `message` with SHA-256 or SHA-1; needs the private key.
    public func sign(_ message: [UInt8], sha1: Bool = false) throws(CryptoError) -> [UInt8] {
        guard isPrivate else { throw .invalidKey("signing needs the private key") }
        guard let ctx = EVP_MD_CTX_new() else { throw .signFailed(CryptoError.drainOpenSSLErrors()) }
        defer { EVP_MD_CTX_free(ctx) }
        let digest = sha1 ? FetchedDigest.sha1 : FetchedDigest.sha256
        guard EVP_DigestSignInit(ctx, nil, digest.md, nil, key) == 1 else { throw .signFailed(CryptoError.drainOpenSSLErrors()) }
        let signature = try DigestSigning.sign(ctx, key: key, message: message)
        return signature
    }

    private func crypt(_ input: [UInt8], encrypting: Bool, padding: Padding) throws(CryptoError) -> [UInt8] {
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { throw .sealFailed(CryptoError.drainOpenSSLErrors()) }
        defer { EVP_PKEY_CTX_free(ctx) }
        let initialised = encrypting ? EVP_PKEY_encrypt_init(ctx) : EVP_PKEY_decrypt_init(ctx)
        let padded: Bool
        switch padding {
        case .pkcs1: padded = EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1
        case .oaepSHA1, .oaepSHA256:
            let digest = padding == .oaepSHA256 ? FetchedDigest.sha256 : FetchedDigest.sha1
            padded = EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) == 1
                && EVP_PKEY_CTX_set_rsa_oaep_md(ctx, digest.md) == 1 && EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, digest.md) == 1
        }
        guard initialised == 1, padded else { throw .sealFailed(CryptoError.drainOpenSSLErrors()) }
        var length = Int(EVP_PKEY_get_size(key))
        var output = [UInt8](repeating: 0, count: length)
        let ok = input.withUnsafeBufferPointer { bytes in
            encrypting
                ? EVP_PKEY_encrypt(ctx, &output, &length, bytes.baseAddress, bytes.count) == 1
                : EVP_PKEY_decrypt(ctx, &output, &length, bytes.baseAddress, bytes.count) == 1
        }
        guard ok, length <= output.count else {
            let detail = CryptoError.drainOpenSSLErrors()
            if encrypting { throw .sealFailed(detail) }
            throw .openFailed("RSA decryption failed: wrong key or damaged data")
        }
        output.removeLast(output.count - length)
        return output
    }
}
