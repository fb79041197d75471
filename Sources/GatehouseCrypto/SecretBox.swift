internal import COpenSSL

/// Seals secrets at rest with AES-256-GCM under the master key.
///
/// Layout of a sealed value: one version byte, a 12-byte random nonce, the ciphertext and a
/// 16-byte tag. The caller's `context` (for example `app-secret:<key>`) is bound as
/// additional data, so a sealed value copied onto another row does not open there.
public struct SecretBox: Sendable {
    private static let version: UInt8 = 1
    private static let nonceLength = 12
    private static let tagLength = AESGCM.tagLength
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
        let nonce = try SecureRandom.bytes(Self.nonceLength)
        let sealed = try gcm.seal(plaintext, nonce: nonce, aad: Array(context.utf8))
        var out: [UInt8] = []
        out.reserveCapacity(1 + nonce.count + sealed.ciphertext.count + sealed.tag.count)
        out.append(Self.version)
        out += nonce
        out += sealed.ciphertext
        out += sealed.tag
        return out
    }

    /// Decrypts a value made by `seal` with the same key and `context`.
    public func open(_ sealed: [UInt8], context: String) throws(CryptoError) -> [UInt8] {
        let overhead = 1 + Self.nonceLength + Self.tagLength
        guard sealed.count >= overhead, sealed[0] == Self.version else {
            throw .openFailed("not a sealed value of a known version")
        }
        let nonce = Array(sealed[1..<(1 + Self.nonceLength)])
        let ciphertext = Array(sealed[(1 + Self.nonceLength)..<(sealed.count - Self.tagLength)])
        let tag = Array(sealed[(sealed.count - Self.tagLength)...])
        return try gcm.open(ciphertext, nonce: nonce, aad: Array(context.utf8), tag: tag)
    }

    /// A 32-byte key for `purpose`, derived from the master key (HMAC-SHA256 as a PRF), so
    /// features that need a stable keyed hash, such as per-app user ids, never use the master
    /// key itself and never share a key with each other.
    public func derivedKey(purpose: String) -> [UInt8] {
        HMAC.sha256(key: key, message: Array(("gatehouse-derive:" + purpose).utf8))
    }
}
