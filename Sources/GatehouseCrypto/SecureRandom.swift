internal import COpenSSL
internal import GatehouseCore

/// Cryptographically strong random bytes and identifiers from OpenSSL's DRBG.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let ok = buffer.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        guard ok == 1 else { throw .randomUnavailable(CryptoError.drainOpenSSLErrors()) }
        return buffer
    }

    /// A 27-character base64url identifier (160 random bits): the form of OAuth.io keys,
    /// secrets, states and codes, so existing SDK validation (`^[a-zA-Z0-9\-_]{23,27}$`) accepts it.
    public static func identifier() throws(CryptoError) -> String {
        Base64URL.encode(try bytes(20))
    }
}
