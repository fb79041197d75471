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

    /// `verify(signature:message:algorithm:)` over borrowed bytes.
    func verify(signature: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer, algorithm: SignatureAlgorithm) -> Bool {
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
        guard let ctx = contexts.makeContext(for: algorithm) else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        return EVP_DigestVerify(
            ctx, signature.baseAddress?.assumingMemoryBound(to: UInt8.self), signature.count,
            message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count
        ) == 1
    }
}
