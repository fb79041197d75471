internal import COpenSSL

/// Verification contexts prepared once per key, one for each algorithm the key supports.
///
/// `EVP_DigestVerifyInit` looks up the signature and digest implementations by name on
/// every call, which costs about a seventh of an RS256 verification. Each verification here
/// instead copies a prepared context, which only duplicates state. The prepared contexts
/// are never used directly, and copying only reads them, so threads can share them.
final class VerificationContexts {
    private let key: OpaquePointer
    private let prepared: [OpaquePointer?]

    /// Prepares a context for every algorithm `kind` supports. `key` must outlive this object.
    init(key: OpaquePointer, kind: KeyKind) {
        self.key = key
        prepared = SignatureAlgorithm.allCases.map { algorithm in
            guard kind.supports(algorithm), let ctx = EVP_MD_CTX_new() else { return nil }
            guard Self.prepare(ctx, key: key, algorithm: algorithm) else {
                EVP_MD_CTX_free(ctx)
                ERR_clear_error()
                return nil
            }
            return ctx
        }
    }

    deinit {
        for ctx in prepared { EVP_MD_CTX_free(ctx) }
    }

    /// A context ready for one `EVP_DigestVerify` with `algorithm`, which the caller must
    /// free; nil only if OpenSSL runs out of memory.
    func makeContext(for algorithm: SignatureAlgorithm) -> OpaquePointer? {
        guard let ctx = EVP_MD_CTX_new() else { return nil }
        let ready: Bool
        if let template = prepared[algorithm.ordinal] {
            ready = EVP_MD_CTX_copy_ex(ctx, template) == 1
        } else {
            // Preparation failed at init (it should not); set up from scratch instead.
            ready = Self.prepare(ctx, key: key, algorithm: algorithm)
        }
        guard ready else {
            EVP_MD_CTX_free(ctx)
            return nil
        }
        // The copy serves one verification and is freed after it. Without this flag,
        // EVP_DigestVerifyFinal duplicates the signature context once more so that the copy
        // could go on being updated.
        EVP_MD_CTX_set_flags(ctx, EVP_MD_CTX_FLAG_FINALISE)
        return ctx
    }

    private static func prepare(_ ctx: OpaquePointer, key: OpaquePointer, algorithm: SignatureAlgorithm) -> Bool {
        var pkeyContext: OpaquePointer?
        guard EVP_DigestVerifyInit(ctx, &pkeyContext, algorithm.digest.md, nil, key) == 1 else { return false }
        guard algorithm.usesPSS else { return true }
        // RFC 7518 §3.5: MGF1 with the same hash (OpenSSL's default) and a salt as long as the
        // hash, which the verifier insists on.
        guard let pkeyContext else { return false }
        return EVP_PKEY_CTX_set_rsa_padding(pkeyContext, RSA_PKCS1_PSS_PADDING) == 1
            && EVP_PKEY_CTX_set_rsa_pss_saltlen(pkeyContext, RSA_PSS_SALTLEN_DIGEST) == 1
    }
}
