internal import HTTPClient

extension HTTPClientError {
    /// Why a provider call failed, for a login's error message: a certificate the gateway does
    /// not trust is said plainly, since only the operator (or the provider) can fix it.
    var upstreamReason: String {
        self == .certificateRejected
            ? "the provider's TLS certificate is not trusted, so nothing was sent"
            : "the provider did not answer: \(shortDescription)"
    }
}
