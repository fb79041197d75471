internal import COpenSSL

extension PublicKey {
    /// True if `signature` is a valid `algorithm` signature of `message` under this key.
    ///
    /// ECDSA signatures are JOSE's raw `r ‖ s` of exactly twice the coordinate size; DER is
    /// refused. Any mismatch between key and algorithm, or any malformed input, gives false.
    public func verify(signature: [UInt8], message: [UInt8], algorithm: SignatureAlgorithm) -> Bool {
        signature.withUnsafeBytes { signatureBytes in
            message.withUnsafeBytes { messageBytes in
                verify(signature: signatureBytes, message: messageBytes, algorithm: algorithm)
            }
        }
    }

    /// `verify(signature:message:algorithm:)` over borrowed bytes, so callers holding slices
    /// need not copy them.
    public func verify(signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, algorithm: SignatureAlgorithm) -> Bool {
        guard supports(algorithm), !signature.isEmpty else { return false }
        let valid: Bool
        if let curve = algorithm.curve {
            valid = ECDSASignature.withDER(raw: signature, curve: curve) { der in
                digestVerify(signature: der, message: message, algorithm: algorithm)
            } ?? false
        } else {
            valid = digestVerify(signature: signature, message: message, algorithm: algorithm)
        }
        // A failed verification leaves entries on this thread's error queue; the next Task to
        // run here must not find them.
        if !valid { ERR_clear_error() }
        return valid
    }

    private func digestVerify(signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, algorithm: SignatureAlgorithm) -> Bool {
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        var pkeyContext: OpaquePointer?
        guard EVP_DigestVerifyInit(ctx, &pkeyContext, algorithm.digest.md, nil, key) == 1 else { return false }
        if algorithm.usesPSS {
            // RFC 7518 §3.5: MGF1 with the same hash (OpenSSL's default) and a salt as long as
            // the hash, which the verifier insists on.
            guard let pkeyContext,
                EVP_PKEY_CTX_set_rsa_padding(pkeyContext, RSA_PKCS1_PSS_PADDING) == 1,
                EVP_PKEY_CTX_set_rsa_pss_saltlen(pkeyContext, RSA_PSS_SALTLEN_DIGEST) == 1
            else { return false }
        }
        return EVP_DigestVerify(
            ctx, signature.baseAddress?.assumingMemoryBound(to: UInt8.self), signature.count,
            message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count
        ) == 1
    }
}
