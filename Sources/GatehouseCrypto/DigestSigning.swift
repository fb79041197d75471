internal import COpenSSL

/// The last step every signer shares: `EVP_DigestSign` into a buffer of the key's largest
/// signature, trimmed to what OpenSSL wrote.
enum DigestSigning {
    /// `context` has been set up by `EVP_DigestSignInit` for `key`.
    static func sign(_ context: OpaquePointer, key: OpaquePointer, message: [UInt8]) throws(CryptoError) -> [UInt8] {
        var length = Int(EVP_PKEY_get_size(key))
        var signature = [UInt8](repeating: 0, count: length)
        let signed = message.withUnsafeBufferPointer { input in
            EVP_DigestSign(context, &signature, &length, input.baseAddress, input.count) == 1
        }
        guard signed, length <= signature.count else { throw .signFailed(CryptoError.drainOpenSSLErrors()) }
        signature.removeLast(signature.count - length)
        return signature
    }
}
