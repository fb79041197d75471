internal import COpenSSL

/// HMAC (RFC 2104) through OpenSSL 3's `EVP_MAC` interface.
public enum HMAC {
    /// HMAC-SHA1, as OAuth 1.0a `HMAC-SHA1` signatures require (20 bytes).
    public static func sha1(key: [UInt8], message: [UInt8]) -> [UInt8] {
        authenticate(key: key, message: message, digest: .sha1)
    }

    /// HMAC-MD5 (16 bytes), for vendor protocols that mandate it.
    public static func md5(key: [UInt8], message: [UInt8]) -> [UInt8] {
        authenticate(key: key, message: message, digest: .md5)
    }

    /// HMAC-SHA256 (32 bytes).
    public static func sha256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        authenticate(key: key, message: message, digest: .sha256)
    }

    /// HMAC-SHA384 (48 bytes), JOSE's HS384.
    public static func sha384(key: [UInt8], message: [UInt8]) -> [UInt8] {
        authenticate(key: key, message: message, digest: .sha384)
    }

    /// HMAC-SHA512 (64 bytes), JOSE's HS512.
    public static func sha512(key: [UInt8], message: [UInt8]) -> [UInt8] {
        authenticate(key: key, message: message, digest: .sha512)
    }

    private static func authenticate(key: [UInt8], message: [UInt8], digest: FetchedDigest) -> [UInt8] {
        guard let ctx = EVP_MAC_CTX_new(FetchedMAC.hmac.mac) else {
            preconditionFailure("EVP_MAC_CTX_new failed: \(CryptoError.drainOpenSSLErrors())")
        }
        defer { EVP_MAC_CTX_free(ctx) }
        let digestKey: StaticString = "digest"
        let params = [
            OSSL_PARAM_construct_utf8_string(digestKey.cString, digest.name.mutableCString, 0),
            OSSL_PARAM_construct_end(),
        ]
        // An empty key must still be passed as a non-null pointer: with NULL, OpenSSL keeps
        // whatever key the context had (none) and the init fails.
        let padded = key.isEmpty ? [0] : key
        return [UInt8](unsafeUninitializedCapacity: digest.size) { out, initialized in
            var length = 0
            let ok = padded.withUnsafeBufferPointer { keyBytes in
                message.withUnsafeBufferPointer { input in
                    EVP_MAC_init(ctx, keyBytes.baseAddress, key.count, params) == 1
                        && EVP_MAC_update(ctx, input.baseAddress, input.count) == 1
                        && EVP_MAC_final(ctx, out.baseAddress, &length, out.count) == 1
                }
            }
            // As with digests: only memory exhaustion gets here, and a short MAC must never escape.
            guard ok, length == digest.size else {
                preconditionFailure("HMAC failed: \(CryptoError.drainOpenSSLErrors())")
            }
            initialized = length
        }
    }

    /// The HMAC implementation, fetched once like the digests.
    private final class FetchedMAC: @unchecked Sendable {
        // @unchecked: owns an immutable `EVP_MAC` handle that OpenSSL lets threads share; each
        // computation makes its own `EVP_MAC_CTX`. Never freed: it lives as long as the process.

        static let hmac = FetchedMAC()

        let mac: OpaquePointer

        private init() {
            let name: StaticString = "HMAC"
            guard let mac = EVP_MAC_fetch(nil, name.cString, nil) else {
                preconditionFailure("OpenSSL's default provider has no HMAC: \(CryptoError.drainOpenSSLErrors())")
            }
            self.mac = mac
        }
    }
}
