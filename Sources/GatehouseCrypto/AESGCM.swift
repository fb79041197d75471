internal import COpenSSL

/// AES in Galois/Counter Mode with a 16-byte tag: `SecretBox` seals with it, and JWE content
/// (A128GCM, A256GCM) is opened with it.
public enum AESGCM {
    public static let tagLength = 16

    /// `plaintext` encrypted under `key` (16, 24 or 32 bytes) and `nonce`, authenticating `aad`.
    public static func seal(
        _ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]
    ) throws(CryptoError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        let cipher = try FetchedCipher.gcm(keyLength: key.count)
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .sealFailed("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + tagLength)
        var tag = [UInt8](repeating: 0, count: tagLength)
        let ok = run(ctx, cipher: cipher, encrypting: true, key: key, nonce: nonce, aad: aad, input: plaintext, output: &ciphertext,
            afterFinal: { gh_gcm_get_tag(ctx, Int32(tagLength), &tag) == 1 })
        guard ok else { throw .sealFailed(CryptoError.drainOpenSSLErrors()) }
        return (ciphertext, tag)
    }

    /// The plaintext of `ciphertext`, if `tag` authenticates it and `aad` under `key` and `nonce`.
    public static func open(
        _ ciphertext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8], tag: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        let cipher = try FetchedCipher.gcm(keyLength: key.count)
        guard tag.count == tagLength else { throw .openFailed("the tag must be \(tagLength) bytes, got \(tag.count)") }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .openFailed("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + tagLength)
        var expected = tag
        // The tag must be set before the final call, which is where GCM checks it.
        let ok = run(ctx, cipher: cipher, encrypting: false, key: key, nonce: nonce, aad: aad, input: ciphertext, output: &plaintext,
            beforeFinal: { gh_gcm_set_tag(ctx, Int32(tagLength), &expected) == 1 })
        guard ok else {
            ERR_clear_error()
            throw .openFailed("authentication failed: wrong key, wrong context or damaged data")
        }
        return plaintext
    }

    /// One GCM pass; `output` is trimmed to what was written. `beforeFinal` runs between the
    /// data and the final call, `afterFinal` after it.
    private static func run(
        _ ctx: OpaquePointer, cipher: FetchedCipher, encrypting: Bool, key: [UInt8], nonce: [UInt8], aad: [UInt8],
        input: [UInt8], output: inout [UInt8], beforeFinal: () -> Bool = { true }, afterFinal: () -> Bool = { true }
    ) -> Bool {
        guard !nonce.isEmpty,
            EVP_CipherInit_ex2(ctx, cipher.handle, nil, nil, encrypting ? 1 : 0, nil) == 1,
            gh_gcm_set_iv_length(ctx, Int32(nonce.count)) == 1,
            EVP_CipherInit_ex2(ctx, nil, key, nonce, encrypting ? 1 : 0, nil) == 1
        else { return false }
        var length: Int32 = 0
        if !aad.isEmpty {
            guard EVP_CipherUpdate(ctx, nil, &length, aad, Int32(aad.count)) == 1 else { return false }
        }
        var written = 0
        if !input.isEmpty {
            guard EVP_CipherUpdate(ctx, &output, &length, input, Int32(input.count)) == 1 else { return false }
            written = Int(length)
        }
        guard beforeFinal() else { return false }
        let finalOK = output.withUnsafeMutableBufferPointer { out in
            EVP_CipherFinal_ex(ctx, out.baseAddress.map { $0 + written }, &length) == 1
        }
        guard finalOK else { return false }
        written += Int(length)
        output.removeLast(output.count - written)
        return afterFinal()
    }
}
