internal import COpenSSL

/// One-shot message digests (PKCE `S256`, key thumbprints, OAuth 1.0a body hashes).
public enum Digest {
    /// SHA-256 of `bytes` (32 bytes).
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] { hash(bytes, .sha256) }

    /// MD5 of `bytes` (16 bytes). Broken for collisions; only for vendor protocols that still
    /// sign with it (carrier one-click APIs).
    public static func md5(_ bytes: [UInt8]) -> [UInt8] { hash(bytes, .md5) }

    /// SHA-1 of `bytes` (20 bytes). Only for protocols that still mandate it, such as OAuth 1.0a.
    public static func sha1(_ bytes: [UInt8]) -> [UInt8] { hash(bytes, .sha1) }

    /// SHA-384 of `bytes` (48 bytes).
    public static func sha384(_ bytes: [UInt8]) -> [UInt8] { hash(bytes, .sha384) }

    /// SHA-512 of `bytes` (64 bytes).
    public static func sha512(_ bytes: [UInt8]) -> [UInt8] { hash(bytes, .sha512) }

    private static func hash(_ bytes: [UInt8], _ digest: FetchedDigest) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: digest.size) { out, initialized in
            var length: UInt32 = 0
            let ok = bytes.withUnsafeBytes { input in
                EVP_Digest(input.baseAddress, input.count, out.baseAddress, &length, digest.md, nil)
            }
            // EVP_Digest on a fetched digest fails only when memory runs out; an empty or short
            // hash would silently weaken every caller, so stop instead.
            guard ok == 1, Int(length) == digest.size else {
                preconditionFailure("EVP_Digest failed: \(CryptoError.drainOpenSSLErrors())")
            }
            initialized = digest.size
        }
    }
}
