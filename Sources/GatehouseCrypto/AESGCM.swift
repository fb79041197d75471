internal import COpenSSL
internal import Synchronization

/// AES in Galois/Counter Mode with a 16-byte tag: `SecretBox` seals with it, and JWE content
/// (A128GCM, A256GCM) is opened with it.
public enum AESGCM {
    public static let tagLength = 16

    /// Why an open failed: the tag does not match, and which input is to blame cannot be told.
    static var rejected: CryptoError { .openFailed("authentication failed: wrong key, wrong context or damaged data") }

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
            var sealed = [UInt8](repeating: 0, count: plaintext.count + tagLength)
            let ok = plaintext.withUnsafeBytes { input in
                nonce.withUnsafeBytes { nonce in
                    aad.withUnsafeBytes { aad in
                        sealed.withUnsafeMutableBytes { seal(input, nonce: nonce, aad: aad, into: $0) }
                    }
                }
            }
            guard ok else { throw .sealFailed(CryptoError.drainOpenSSLErrors()) }
            return (Array(sealed[..<plaintext.count]), Array(sealed[plaintext.count...]))
        }

        /// Writes the ciphertext of `plaintext` and then its tag into `output`, which has room
        /// for exactly both. False if OpenSSL fails.
        func seal(
            _ plaintext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
            into output: UnsafeMutableRawBufferPointer
        ) -> Bool {
            guard output.count == plaintext.count + tagLength else { return false }
            let tag = output.baseAddress.map { $0 + plaintext.count }
            return AESGCM.run(handle, encrypting: true, nonce: nonce, aad: aad, input: plaintext, output: output,
                afterFinal: { gh_gcm_get_tag(handle, Int32(tagLength), tag) == 1 }) == plaintext.count
        }

        func open(_ ciphertext: [UInt8], nonce: [UInt8], aad: [UInt8], tag: [UInt8]) throws(CryptoError) -> [UInt8] {
            guard tag.count == tagLength else { throw .openFailed("the tag must be \(tagLength) bytes, got \(tag.count)") }
            var plaintext: [UInt8]?
            ciphertext.withUnsafeBytes { ciphertext in
                nonce.withUnsafeBytes { nonce in
                    aad.withUnsafeBytes { aad in
                        tag.withUnsafeBytes { plaintext = open(ciphertext, nonce: nonce, aad: aad, tag: $0) }
                    }
                }
            }
            guard let plaintext else { throw AESGCM.rejected }
            return plaintext
        }

        /// The plaintext of `ciphertext`, or nil if `tag` (exactly `tagLength` bytes) does not
        /// authenticate it.
        func open(
            _ ciphertext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
            tag: UnsafeRawBufferPointer
        ) -> [UInt8]? {
            guard tag.count == tagLength else { return nil }
            var expected = (UInt64(0), UInt64(0))
            withUnsafeMutableBytes(of: &expected) { $0.copyMemory(from: tag) }
            var ok = false
            // Never a zero capacity, which may come without an address for OpenSSL to be given.
            let plaintext = [UInt8](unsafeUninitializedCapacity: max(ciphertext.count, 1)) { buffer, initialised in
                // The tag must be set before the final call, which is where GCM checks it.
                let written = AESGCM.run(handle, encrypting: false, nonce: nonce, aad: aad, input: ciphertext,
                    output: UnsafeMutableRawBufferPointer(buffer),
                    beforeFinal: { withUnsafeMutableBytes(of: &expected) { gh_gcm_set_tag(handle, Int32(tagLength), $0.baseAddress) == 1 } })
                ok = written == ciphertext.count
                // UInt8 needs no deinitialisation: a failed open hands back nothing it wrote.
                initialised = ok ? ciphertext.count : 0
            }
            guard ok else {
                ERR_clear_error()
                return nil
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

        /// `Context.seal(_:nonce:aad:into:)` on one of this key's contexts.
        func seal(
            _ plaintext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
            into output: UnsafeMutableRawBufferPointer
        ) throws(CryptoError) {
            let context = try take(failure: CryptoError.sealFailed)
            guard context.seal(plaintext, nonce: nonce, aad: aad, into: output) else {
                throw .sealFailed(CryptoError.drainOpenSSLErrors())
            }
            giveBack(context)
        }

        /// `Context.open(_:nonce:aad:tag:)` on one of this key's contexts. A context whose open
        /// failed is dropped, not kept: nothing of a failed check is reused.
        func open(
            _ ciphertext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
            tag: UnsafeRawBufferPointer
        ) throws(CryptoError) -> [UInt8] {
            let context = try take(failure: CryptoError.openFailed)
            guard let plaintext = context.open(ciphertext, nonce: nonce, aad: aad, tag: tag) else { throw AESGCM.rejected }
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

    /// One GCM pass on a context that holds its key: the number of bytes written to `output`
    /// (GCM writes as many as it reads), or nil. `beforeFinal` runs between the data and the
    /// final call, `afterFinal` after it.
    private static func run(
        _ ctx: OpaquePointer, encrypting: Bool, nonce: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer,
        input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer,
        beforeFinal: () -> Bool = { true }, afterFinal: () -> Bool = { true }
    ) -> Int? {
        // A new nonce (and direction) on the key already set: GCM starts over from here.
        guard !nonce.isEmpty, output.count >= input.count,
            gh_gcm_set_iv_length(ctx, Int32(nonce.count)) == 1,
            EVP_CipherInit_ex2(ctx, nil, nil, nonce.bytes, encrypting ? 1 : 0, nil) == 1
        else { return nil }
        var length: Int32 = 0
        if !aad.isEmpty {
            guard EVP_CipherUpdate(ctx, nil, &length, aad.bytes, Int32(aad.count)) == 1 else { return nil }
        }
        let out = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var written = 0
        if !input.isEmpty {
            guard EVP_CipherUpdate(ctx, out, &length, input.bytes, Int32(input.count)) == 1 else { return nil }
            written = Int(length)
        }
        // GCM holds nothing back, so the final call writes nothing; anything else is refused
        // before it could run past `output`.
        guard written == input.count, beforeFinal(), EVP_CipherFinal_ex(ctx, out.map { $0 + written }, &length) == 1,
            length == 0
        else { return nil }
        return afterFinal() ? written : nil
    }
}

extension UnsafeRawBufferPointer {
    /// The bytes as OpenSSL's `unsigned char *` takes them.
    fileprivate var bytes: UnsafePointer<UInt8>? { baseAddress?.assumingMemoryBound(to: UInt8.self) }
}
