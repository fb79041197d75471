internal import COpenSSL

/// A message digest fetched from OpenSSL's default provider once per process.
///
/// `EVP_sha256()` and friends look the implementation up again on every use; fetching once and
/// reusing the handle is both faster and explicit about which provider serves it.
final class FetchedDigest: @unchecked Sendable {
    // @unchecked: owns an immutable `EVP_MD` handle, which OpenSSL allows any number of threads
    // to use at once. It is never freed: the instances live as long as the process.

    static let md5 = FetchedDigest("MD5", size: 16)
    static let sha1 = FetchedDigest("SHA1", size: 20)
    static let sha256 = FetchedDigest("SHA256", size: 32)
    static let sha384 = FetchedDigest("SHA384", size: 48)
    static let sha512 = FetchedDigest("SHA512", size: 64)

    /// The OpenSSL algorithm name, also what HMAC's `digest` parameter expects.
    let name: StaticString
    /// The digest length in bytes.
    let size: Int
    let md: OpaquePointer

    private init(_ name: StaticString, size: Int) {
        guard let md = EVP_MD_fetch(nil, name.cString, nil) else {
            // Only a broken libcrypto installation lacks these; nothing can be verified or signed.
            preconditionFailure("OpenSSL's default provider has no \(name): \(CryptoError.drainOpenSSLErrors())")
        }
        self.name = name
        self.size = size
        self.md = md
    }
}
