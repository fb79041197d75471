internal import COpenSSL
internal import Synchronization

/// AES in Galois/Counter Mode with a 16-byte tag: `SecretBox` seals with it, and JWE content
/// (A128GCM, A256GCM) is opened with it.
public enum AESGCM {
    public static let tagLength = 16

    /// `plaintext` encrypted under `key` (16, 24 or 32 bytes) and `nonce`, authenticating `aad`.
    public static func seal(
        _ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8]
    ) throws(CryptoError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        try Context.make(key: key, failure: CryptoError.sealFailed).seal(plaintext, nonce: nonce, aad: aad)
    }

    /// The plaintext of `ciphertext`, if `tag` authenticates it and `aad` under `key` and `nonce`.
    public static func open(
        _ ciphertext: [UInt8], key: [UInt8], nonce: [UInt8], aad: [UInt8], tag: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        try Context.make(key: key, failure: CryptoError.openFailed).open(ciphertext, nonce: nonce, aad: aad, tag: tag)
    }

    /// An EVP context holding one key, already expanded (round keys, GHASH table). Setting the
    /// key costs more than sealing a login record, so `Keyed` keeps these and each operation
    /// only gives a context its nonce. One operation at a time per context.
    final class Context: @unchecked Sendable {
        // @unchecked: used by one operation at a time (`Keyed` hands each out to one taker).
        let handle: OpaquePointer

        /// `failure` wraps OpenSSL's reason when the context cannot be made; a key of a length
        /// AES does not have is `invalidKey`.
        static func make(key: [UInt8], failure: (String) -> CryptoError) throws(CryptoError) -> Context {
            let cipher = try FetchedCipher.gcm(keyLength: key.count)
            guard let handle = EVP_CIPHER_CTX_new() else { throw failure("EVP_CIPHER_CTX_new") }
            let context = Context(handle: handle)
            guard EVP_CipherInit_ex2(handle, cipher.handle, key, nil, 1, nil) == 1 else { throw failure(CryptoError.drainOpenSSLErrors()) }
            return context
        }

        private init(handle: OpaquePointer) {
            self.handle = handle
        }

        deinit { EVP_CIPHER_CTX_free(handle) }

        func seal(_ plaintext: [UInt8], nonce: [UInt8], aad: [UInt8]) throws(CryptoError) -> (ciphertext: [UInt8], tag: [UInt8]) {
            var ciphertext = [UInt8](repeating: 0, count: plaintext.count + tagLength)
            var tag = [UInt8](repeating: 0, count: tagLength)
            let ok = AESGCM.run(handle, encrypting: true, nonce: nonce, aad: aad, input: plaintext, output: &ciphertext,
                afterFinal: { gh_gcm_get_tag(handle, Int32(tagLength), &tag) == 1 })
            guard ok else { throw .sealFailed(CryptoError.drainOpenSSLErrors()) }
            return (ciphertext, tag)
        }

        func open(_ ciphertext: [UInt8], nonce: [UInt8], aad: [UInt8], tag: [UInt8]) throws(CryptoError) -> [UInt8] {
            guard tag.count == tagLength else { throw .openFailed("the tag must be \(tagLength) bytes, got \(tag.count)") }
            var plaintext = [UInt8](repeating: 0, count: ciphertext.count + tagLength)
            var expected = tag
            // The tag must be set before the final call, which is where GCM checks it.
            let ok = AESGCM.run(handle, encrypting: false, nonce: nonce, aad: aad, input: ciphertext, output: &plaintext,
                beforeFinal: { gh_gcm_set_tag(handle, Int32(tagLength), &expected) == 1 })
            guard ok else {
                ERR_clear_error()
                throw .openFailed("authentication failed: wrong key, wrong context or damaged data")
            }
            return plaintext
        }
    }

    /// One key's contexts, reused: `SecretBox` seals and opens several records per login under
    /// the master key. A context is handed to one operation at a time; a few are kept idle.
    final class Keyed: @unchecked Sendable {
        // @unchecked: a context is touched only by the operation that took it from `idle`.
        private let key: [UInt8]
        private let idle = Mutex<[Context]>([])
        private static let idleLimit = 8

        init(key: [UInt8]) {
            self.key = key
        }

        func seal(_ plaintext: [UInt8], nonce: [UInt8], aad: [UInt8]) throws(CryptoError) -> (ciphertext: [UInt8], tag: [UInt8]) {
            let context = try take(failure: CryptoError.sealFailed)
            let sealed = try context.seal(plaintext, nonce: nonce, aad: aad)
            giveBack(context)
            return sealed
        }

        /// A context whose open failed is dropped, not kept: nothing of a failed check is reused.
        func open(_ ciphertext: [UInt8], nonce: [UInt8], aad: [UInt8], tag: [UInt8]) throws(CryptoError) -> [UInt8] {
            let context = try take(failure: CryptoError.openFailed)
            let plaintext = try context.open(ciphertext, nonce: nonce, aad: aad, tag: tag)
            giveBack(context)
            return plaintext
        }

        private func take(failure: (String) -> CryptoError) throws(CryptoError) -> Context {
            if let ready = idle.withLock({ $0.popLast() }) { return ready }
            return try Context.make(key: key, failure: failure)
        }

        private func giveBack(_ context: Context) {
            idle.withLock { contexts in
                if contexts.count < Self.idleLimit { contexts.append(context) }
            }
        }
    }

    /// One GCM pass on a context that holds its key; `output` is trimmed to what was written.
    /// `beforeFinal` runs between the data and the final call, `afterFinal` after it.
    private static func run(
        _ ctx: OpaquePointer, encrypting: Bool, nonce: [UInt8], aad: [UInt8],
        input: [UInt8], output: inout [UInt8], beforeFinal: () -> Bool = { true }, afterFinal: () -> Bool = { true }
    ) -> Bool {
        // A new nonce (and direction) on the key already set: GCM starts over from here.
        guard !nonce.isEmpty,
            gh_gcm_set_iv_length(ctx, Int32(nonce.count)) == 1,
            EVP_CipherInit_ex2(ctx, nil, nil, nonce, encrypting ? 1 : 0, nil) == 1
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
