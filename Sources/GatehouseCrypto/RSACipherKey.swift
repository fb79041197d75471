internal import COpenSSL

/// An RSA key for the PKCS#1 v1.5 encryption and signatures of carrier one-click vendors,
/// which hand out or accept 1024-bit keys: unlike `PublicKey`/`PrivateKey` (JOSE, 2048 bits
/// and up) this accepts 1024...8192-bit moduli.
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

    /// RSAES-PKCS1-v1_5 encryption (RFC 8017 §7.2.1).
    public func encrypt(_ plaintext: [UInt8]) throws(CryptoError) -> [UInt8] {
        try crypt(plaintext, encrypting: true)
    }

    /// RSAES-PKCS1-v1_5 decryption; needs the private key.
    public func decrypt(_ ciphertext: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard isPrivate else { throw .invalidKey("decryption needs the private key") }
        return try crypt(ciphertext, encrypting: false)
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

    private func crypt(_ input: [UInt8], encrypting: Bool) throws(CryptoError) -> [UInt8] {
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { throw .sealFailed(CryptoError.drainOpenSSLErrors()) }
        defer { EVP_PKEY_CTX_free(ctx) }
        let initialised = encrypting ? EVP_PKEY_encrypt_init(ctx) : EVP_PKEY_decrypt_init(ctx)
        guard initialised == 1, EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1 else {
            throw .sealFailed(CryptoError.drainOpenSSLErrors())
        }
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
