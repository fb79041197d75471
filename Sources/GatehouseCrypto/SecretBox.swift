internal import COpenSSL

/// Seals secrets at rest with AES-256-GCM under the master key.
///
/// Layout of a sealed value: one version byte, a 12-byte random nonce, the ciphertext and a
/// 16-byte tag. The caller's `context` (for example `app-secret:<key>`) is bound as
/// additional data, so a sealed value copied onto another row does not open there.
public struct SecretBox: Sendable {
    private static let version: UInt8 = 1
    private static let nonceLength = 12
    private static let tagLength = 16
    /// The master key length in bytes.
    public static let keyLength = 32

    private let key: [UInt8]

    /// A box over a 32-byte master key.
    public init(key: [UInt8]) throws(CryptoError) {
        guard key.count == Self.keyLength else {
            throw .invalidKey("the master key must be \(Self.keyLength) bytes, got \(key.count)")
        }
        self.key = key
    }

    /// Encrypts `plaintext`, binding `context`.
    public func seal(_ plaintext: [UInt8], context: String) throws(CryptoError) -> [UInt8] {
        let nonce = try SecureRandom.bytes(Self.nonceLength)
        let aad = Array(context.utf8)
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .sealFailed("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + Self.tagLength)
        var tag = [UInt8](repeating: 0, count: Self.tagLength)
        let ok: Bool = key.withUnsafeBufferPointer { keyBytes in
            nonce.withUnsafeBufferPointer { nonceBytes in
                guard EVP_EncryptInit_ex2(ctx, FetchedCipher.aes256GCM.handle, keyBytes.baseAddress, nonceBytes.baseAddress, nil) == 1
                else { return false }
                var length: Int32 = 0
                if !aad.isEmpty {
                    guard EVP_EncryptUpdate(ctx, nil, &length, aad, Int32(aad.count)) == 1 else { return false }
                }
                var written = 0
                if !plaintext.isEmpty {
                    guard EVP_EncryptUpdate(ctx, &ciphertext, &length, plaintext, Int32(plaintext.count)) == 1
                    else { return false }
                    written = Int(length)
                }
                let finalOK = ciphertext.withUnsafeMutableBufferPointer { out in
                    EVP_EncryptFinal_ex(ctx, out.baseAddress.map { $0 + written }, &length) == 1
                }
                guard finalOK else { return false }
                written += Int(length)
                ciphertext.removeLast(ciphertext.count - written)
                return gh_gcm_get_tag(ctx, Int32(Self.tagLength), &tag) == 1
            }
        }
        guard ok else { throw .sealFailed(CryptoError.drainOpenSSLErrors()) }
        return [Self.version] + nonce + ciphertext + tag
    }

    /// Decrypts a value made by `seal` with the same key and `context`.
    public func open(_ sealed: [UInt8], context: String) throws(CryptoError) -> [UInt8] {
        let overhead = 1 + Self.nonceLength + Self.tagLength
        guard sealed.count >= overhead, sealed[0] == Self.version else {
            throw .openFailed("not a sealed value of a known version")
        }
        let nonce = Array(sealed[1..<(1 + Self.nonceLength)])
        let ciphertext = Array(sealed[(1 + Self.nonceLength)..<(sealed.count - Self.tagLength)])
        var tag = Array(sealed[(sealed.count - Self.tagLength)...])
        let aad = Array(context.utf8)
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .openFailed("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + Self.tagLength)
        let ok: Bool = key.withUnsafeBufferPointer { keyBytes in
            nonce.withUnsafeBufferPointer { nonceBytes in
                guard EVP_DecryptInit_ex2(ctx, FetchedCipher.aes256GCM.handle, keyBytes.baseAddress, nonceBytes.baseAddress, nil) == 1
                else { return false }
                var length: Int32 = 0
                if !aad.isEmpty {
                    guard EVP_DecryptUpdate(ctx, nil, &length, aad, Int32(aad.count)) == 1 else { return false }
                }
                var written = 0
                if !ciphertext.isEmpty {
                    guard EVP_DecryptUpdate(ctx, &plaintext, &length, ciphertext, Int32(ciphertext.count)) == 1
                    else { return false }
                    written = Int(length)
                }
                guard gh_gcm_set_tag(ctx, Int32(Self.tagLength), &tag) == 1 else { return false }
                let finalOK = plaintext.withUnsafeMutableBufferPointer { out in
                    EVP_DecryptFinal_ex(ctx, out.baseAddress.map { $0 + written }, &length) == 1
                }
                guard finalOK else { return false }
                written += Int(length)
                plaintext.removeLast(plaintext.count - written)
                return true
            }
        }
        guard ok else {
            ERR_clear_error()
            throw .openFailed("authentication failed: wrong key, wrong context or damaged data")
        }
        return plaintext
    }

    /// A 32-byte key for `purpose`, derived from the master key (HMAC-SHA256 as a PRF), so
    /// features that need a stable keyed hash, such as per-app user ids, never use the master
    /// key itself and never share a key with each other.
    public func derivedKey(purpose: String) -> [UInt8] {
        HMAC.sha256(key: key, message: Array(("gatehouse-derive:" + purpose).utf8))
    }
}
