internal import COpenSSL
internal import GatehouseCore

/// Seals secrets at rest with AES-256-GCM under the master key.
///
/// Layout of a sealed value: one version byte, a 12-byte random nonce, the ciphertext and a
/// 16-byte tag. The caller's `context` (for example `app-secret:<key>`) is bound as
/// additional data, so a sealed value copied onto another row does not open there.
public struct SecretBox: Sendable {
    private static let version: UInt8 = 1
    private static let nonceLength = 12
    private static let tagLength = AESGCM.tagLength
    /// Where the nonce ends and the ciphertext starts.
    private static let nonceEnd = 1 + nonceLength
    /// The bytes a sealed value has beyond its plaintext.
    private static let overhead = nonceEnd + tagLength
    /// The master key length in bytes.
    public static let keyLength = 32

    private let key: [UInt8]
    private let gcm: AESGCM.Keyed

    /// A box over a 32-byte master key.
    public init(key: [UInt8]) throws(CryptoError) {
        guard key.count == Self.keyLength else {
            throw .invalidKey("the master key must be \(Self.keyLength) bytes, got \(key.count)")
        }
        self.key = key
        gcm = AESGCM.Keyed(key: key)
    }

    /// Encrypts `plaintext`, binding `context`.
    public func seal(_ plaintext: [UInt8], context: String) throws(CryptoError) -> [UInt8] {
        // Built in place: the nonce, the ciphertext and the tag are written straight into the
        // sealed value rather than each into an array of its own and then copied.
        var failure: CryptoError?
        let sealed = [UInt8](unsafeUninitializedCapacity: Self.overhead + plaintext.count) { buffer, initialised in
            failure = plaintext.withUnsafeBytes { input in
                context.withUTF8InPlace { aad in seal(input, aad: UnsafeRawBufferPointer(aad), into: UnsafeMutableRawBufferPointer(buffer)) }
            }
            // UInt8 needs no deinitialisation; nothing half-sealed is handed back.
            initialised = failure == nil ? buffer.count : 0
        }
        if let failure { throw failure }
        return sealed
    }

    /// Decrypts a value made by `seal` with the same key and `context`.
    public func open(_ sealed: [UInt8], context: String) throws(CryptoError) -> [UInt8] {
        guard sealed.count >= Self.overhead, sealed[0] == Self.version else {
            throw .openFailed("not a sealed value of a known version")
        }
        let opened = sealed.withUnsafeBytes { bytes in
            context.withUTF8InPlace { aad -> Result<[UInt8], CryptoError> in
                let tagStart = bytes.count - Self.tagLength
                return Result { () throws(CryptoError) in
                    try gcm.open(
                        UnsafeRawBufferPointer(rebasing: bytes[Self.nonceEnd..<tagStart]),
                        nonce: UnsafeRawBufferPointer(rebasing: bytes[1..<Self.nonceEnd]), aad: UnsafeRawBufferPointer(aad),
                        tag: UnsafeRawBufferPointer(rebasing: bytes[tagStart...]))
                }
            }
        }
        return try opened.get()
    }

    /// The version, a fresh nonce, then the ciphertext and tag of `plaintext`, into `out`
    /// (exactly `overhead` bytes more than `plaintext`); the reason if it could not be done.
    private func seal(_ plaintext: UnsafeRawBufferPointer, aad: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) -> CryptoError? {
        out[0] = Self.version
        let nonce = UnsafeMutableRawBufferPointer(rebasing: out[1..<Self.nonceEnd])
        guard SecureRandom.fill(nonce) else { return .randomUnavailable(CryptoError.drainOpenSSLErrors()) }
        do throws(CryptoError) {
            let sealed = UnsafeMutableRawBufferPointer(rebasing: out[Self.nonceEnd...])
            try gcm.seal(plaintext, nonce: UnsafeRawBufferPointer(nonce), aad: aad, into: sealed)
        } catch {
            return error
        }
        return nil
    }

    /// A 32-byte key for `purpose`, derived from the master key (HMAC-SHA256 as a PRF), so
    /// features that need a stable keyed hash, such as per-app user ids, never use the master
    /// key itself and never share a key with each other.
    public func derivedKey(purpose: String) -> [UInt8] {
        HMAC.sha256(key: key, message: Array(("gatehouse-derive:" + purpose).utf8))
    }
}
