internal import COpenSSL
import Synchronization

/// A block cipher family. The key length picks the variant: AES takes 16, 24 or 32 bytes,
/// DES 8 bytes and triple DES 24 (or 16, keying option 2).
public enum CipherAlgorithm: String, Sendable, Hashable {
    case aes
    case des
    case tripleDES = "3des"
}

/// How blocks are chained.
public enum CipherMode: String, Sendable, Hashable {
    /// Each block on its own, no IV. Leaks repeated blocks; only for vendor protocols that use it.
    case ecb
    /// Cipher block chaining with an IV of one block.
    case cbc
}

/// Unauthenticated block encryption with PKCS#7 padding, for the vendor protocols of carrier
/// one-click login (AES-ECB envelopes, AES-CBC or DES-CBC encrypted phone numbers). Secrets
/// Gatehouse keeps itself use the authenticated `SecretBox` instead.
public enum BlockCipher {
    /// Encrypts `plaintext`, padding it to whole blocks.
    public static func encrypt(
        _ plaintext: [UInt8], algorithm: CipherAlgorithm, mode: CipherMode, key: [UInt8], iv: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        try run(plaintext, encrypting: true, algorithm: algorithm, mode: mode, key: key, iv: iv)
    }

    /// Decrypts `ciphertext` and removes the padding; a wrong key almost always surfaces as a
    /// padding failure, reported as `openFailed`.
    public static func decrypt(
        _ ciphertext: [UInt8], algorithm: CipherAlgorithm, mode: CipherMode, key: [UInt8], iv: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        try run(ciphertext, encrypting: false, algorithm: algorithm, mode: mode, key: key, iv: iv)
    }

    private static func run(
        _ input: [UInt8], encrypting: Bool, algorithm: CipherAlgorithm, mode: CipherMode, key: [UInt8], iv: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        let cipher = try FetchedCipher.named(algorithm: algorithm, mode: mode, keyLength: key.count)
        if mode == .cbc, iv.count != cipher.blockSize {
            throw .invalidKey("the IV must be \(cipher.blockSize) bytes, got \(iv.count)")
        }
        if !encrypting, input.isEmpty || input.count % cipher.blockSize != 0 {
            throw .openFailed("ciphertext of \(input.count) bytes is not whole \(cipher.blockSize)-byte blocks")
        }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .sealFailed("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var output = [UInt8](repeating: 0, count: input.count + cipher.blockSize)
        var written = 0
        let ok: Bool = key.withUnsafeBufferPointer { keyBytes in
            iv.withUnsafeBufferPointer { ivBytes in
                guard EVP_CipherInit_ex2(ctx, cipher.handle, keyBytes.baseAddress, mode == .cbc ? ivBytes.baseAddress : nil,
                    encrypting ? 1 : 0, nil) == 1
                else { return false }
                var length: Int32 = 0
                if !input.isEmpty {
                    guard EVP_CipherUpdate(ctx, &output, &length, input, Int32(input.count)) == 1 else { return false }
                    written = Int(length)
                }
                let finalOK = output.withUnsafeMutableBufferPointer { out in
                    EVP_CipherFinal_ex(ctx, out.baseAddress.map { $0 + written }, &length) == 1
                }
                guard finalOK else { return false }
                written += Int(length)
                return true
            }
        }
        guard ok else {
            let detail = CryptoError.drainOpenSSLErrors()
            if encrypting { throw .sealFailed(detail) }
            throw .openFailed("bad padding after decryption: wrong key or damaged data")
        }
        output.removeLast(output.count - written)
        return output
    }
}

/// A cipher implementation fetched once per name. Single DES lives in OpenSSL 3's `legacy`
/// provider; it is loaded into a library context of its own so that the process-wide default
/// context (every other algorithm) stays exactly as OpenSSL configures it.
final class FetchedCipher: @unchecked Sendable {
    // @unchecked: owns an immutable `EVP_CIPHER`, which OpenSSL lets threads share; every
    // operation makes its own EVP_CIPHER_CTX. Never freed: the cache lives as long as the process.

    let handle: OpaquePointer
    let blockSize: Int

    private init(handle: OpaquePointer) {
        self.handle = handle
        self.blockSize = Int(EVP_CIPHER_get_block_size(handle))
    }

    /// The sealing cipher of `SecretBox`, used several times per login: `EVP_aes_256_gcm()`
    /// would look the implementation up again on every seal and open.
    static let aes256GCM: FetchedCipher = {
        guard let handle = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil) else {
            // Only a broken libcrypto installation lacks it; no secret could be sealed.
            preconditionFailure("OpenSSL's default provider has no AES-256-GCM: \(CryptoError.drainOpenSSLErrors())")
        }
        return FetchedCipher(handle: handle)
    }()

    private static let cache = Mutex<[String: FetchedCipher]>([:])

    static func named(algorithm: CipherAlgorithm, mode: CipherMode, keyLength: Int) throws(CryptoError) -> FetchedCipher {
        let name: String
        let suffix = mode == .ecb ? "ECB" : "CBC"
        switch (algorithm, keyLength) {
        case (.aes, 16), (.aes, 24), (.aes, 32): name = "AES-\(keyLength * 8)-\(suffix)"
        case (.des, 8): name = "DES-\(suffix)"
        case (.tripleDES, 24): name = "DES-EDE3-\(suffix)"
        case (.tripleDES, 16): name = mode == .ecb ? "DES-EDE-ECB" : "DES-EDE-CBC"
        default:
            throw .invalidKey("a \(algorithm.rawValue) key cannot be \(keyLength) bytes")
        }
        return try named(name, legacy: algorithm == .des)
    }

    /// AES-GCM for a 16, 24 or 32-byte key.
    static func gcm(keyLength: Int) throws(CryptoError) -> FetchedCipher {
        if keyLength == 32 { return aes256GCM }
        guard keyLength == 16 || keyLength == 24 else { throw .invalidKey("an AES key cannot be \(keyLength) bytes") }
        return try named("AES-\(keyLength * 8)-GCM", legacy: false)
    }

    private static func named(_ name: String, legacy: Bool) throws(CryptoError) -> FetchedCipher {
        if let cached = cache.withLock({ $0[name] }) { return cached }
        let context = legacy ? LegacyContext.shared.context : nil
        guard let handle = EVP_CIPHER_fetch(context, name, nil) else {
            throw .unsupportedAlgorithm("OpenSSL has no \(name): \(CryptoError.drainOpenSSLErrors())")
        }
        let fetched = FetchedCipher(handle: handle)
        return cache.withLock { cache in
            if let earlier = cache[name] {
                EVP_CIPHER_free(handle)
                return earlier
            }
            cache[name] = fetched
            return fetched
        }
    }
}

/// A library context with the `default` and `legacy` providers, for single DES only.
private final class LegacyContext: @unchecked Sendable {
    // @unchecked: the context and its providers are set up once in init and only read after.
    static let shared = LegacyContext()

    let context: OpaquePointer?

    private init() {
        let context = OSSL_LIB_CTX_new()
        // If either provider is missing (a libssl build without legacy.so), fetching DES fails
        // later with a clear "unsupported" error rather than here.
        _ = OSSL_PROVIDER_load(context, "default")
        _ = OSSL_PROVIDER_load(context, "legacy")
        self.context = context
    }
}
