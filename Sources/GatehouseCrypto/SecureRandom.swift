internal import COpenSSL

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
        Base64URLAlphabet.encode(try bytes(20))
    }
}

/// Kept local so that this module stays free of a dependency on the core module.
enum Base64URLAlphabet {
    private static let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var bits = 0
        var buffer: UInt32 = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                out.append(table[Int((buffer >> UInt32(bits)) & 0x3F)])
            }
        }
        if bits > 0 {
            out.append(table[Int((buffer << UInt32(6 - bits)) & 0x3F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
