internal import CCurl

/// Process-wide libcurl initialisation.
enum CurlGlobal {
    /// `curl_global_init` must run once before any other libcurl call and,
    /// on older builds, not concurrently with one; a `static let` gives us
    /// exactly-once, thread-safe lazy initialisation. `curl_global_cleanup`
    /// is deliberately never called: other clients may still exist and the
    /// OS reclaims everything at exit.
    static let isInitialized: Bool = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
    }()
}

extension HTTPClientError {
    /// Buckets libcurl's ~100 result codes into the few kinds callers act
    /// on differently; the exact code stays visible in `reason`.
    init(curlCode: CURLcode, detail: String) {
        let reason = "\(detail) (curl error \(curlCode.rawValue))"
        switch curlCode {
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            // Only reachable through a redirect to a disallowed scheme or a
            // URL libcurl parses differently from our pre-check.
            self = .invalidURL(reason)
        case CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT:
            self = .connectFailed(reason)
        case CURLE_OPERATION_TIMEDOUT:
            self = .timedOut(reason)
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS:
            // The server's certificate itself was refused: callers tell users so, since a
            // wrong or private certificate is fixed differently from a broken handshake.
            self = .certificateRejected(reason)
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE,
             CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED,
             CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            self = .tlsFailure(reason)
        case CURLE_FILESIZE_EXCEEDED:
            // CURLOPT_MAXFILESIZE_LARGE tripped on the announced
            // Content-Length before any body byte was read.
            self = .responseTooLarge(reason)
        default:
            self = .transport(reason)
        }
    }
}
