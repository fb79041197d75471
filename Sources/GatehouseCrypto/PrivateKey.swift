internal import COpenSSL

/// A private key for making signatures, such as the ES256 client secret Apple requires.
public final class PrivateKey: @unchecked Sendable {
    // @unchecked: owns an `EVP_PKEY` that is never modified after init; each signature gets
    // its own EVP_MD_CTX, which OpenSSL 3 allows concurrently on one key.

    private let key: OpaquePointer
    /// The key type and size.
    public let kind: KeyKind
    /// The matching public key.
    public let publicKey: PublicKey

    /// Reads an unencrypted PEM private key: PKCS#8 (`-----BEGIN PRIVATE KEY-----`, the form of
    /// Apple's .p8 files) or a traditional `EC PRIVATE KEY` / `RSA PRIVATE KEY` block.
    public init(pem: String) throws(CryptoError) {
        let key = try KeyImport.privateKey(pem: pem)
        let kind = try KeyImport.checkedKind(of: key)
        // Deriving the public half through its DER form reuses the one public-key import path.
        guard let spki = Self.subjectPublicKeyInfo(of: key) else {
            EVP_PKEY_free(key)
            throw .invalidKey("cannot derive the public key: \(CryptoError.drainOpenSSLErrors())")
        }
        let publicKey: PublicKey
        do {
            publicKey = try PublicKey(spkiDER: spki)
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
        self.key = key
        self.kind = kind
        self.publicKey = publicKey
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// Signs `message` with `algorithm`. ECDSA signatures come back in JOSE's fixed-width
    /// `r ‖ s` form (64 bytes for ES256), ready for a compact JWS.
    public func sign(message: [UInt8], algorithm: SignatureAlgorithm) throws(CryptoError) -> [UInt8] {
        guard kind.supports(algorithm) else {
            throw .unsupportedAlgorithm("a \(kind) key cannot make \(algorithm.rawValue) signatures")
        }
        guard let ctx = EVP_MD_CTX_new() else { throw .signFailed(CryptoError.drainOpenSSLErrors()) }
        defer { EVP_MD_CTX_free(ctx) }
        var pkeyContext: OpaquePointer?
        guard EVP_DigestSignInit(ctx, &pkeyContext, algorithm.digest.md, nil, key) == 1 else {
            throw .signFailed(CryptoError.drainOpenSSLErrors())
        }
        if algorithm.usesPSS {
            guard let pkeyContext,
                EVP_PKEY_CTX_set_rsa_padding(pkeyContext, RSA_PKCS1_PSS_PADDING) == 1,
                EVP_PKEY_CTX_set_rsa_pss_saltlen(pkeyContext, RSA_PSS_SALTLEN_DIGEST) == 1
            else { throw .signFailed(CryptoError.drainOpenSSLErrors()) }
        }
        let signature = try DigestSigning.sign(ctx, key: key, message: message)
        guard let curve = algorithm.curve else { return signature }
        guard let raw = signature.withUnsafeBytes({ ECDSASignature.raw(der: $0, curve: curve) }) else {
            throw .signFailed("OpenSSL produced an ECDSA signature that does not fit \(curve.rawValue)")
        }
        return raw
    }

    private static func subjectPublicKeyInfo(of key: OpaquePointer) -> [UInt8]? {
        let length = Int(i2d_PUBKEY(key, nil))
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: length)
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int in
            var cursor = buffer.baseAddress
            return Int(i2d_PUBKEY(key, &cursor))
        }
        return written == length ? der : nil
    }
}
