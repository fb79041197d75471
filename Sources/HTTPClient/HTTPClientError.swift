/// Failure of a request that produced no HTTP response.
///
/// A struct around a private enum, rather than a public enum, so new
/// failure kinds can be added without breaking exhaustive `switch`es in
/// callers. Equality compares the kind only, so `error == .timedOut`
/// works whatever the `reason` text says.
public struct HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: String, Sendable {
        case invalidURL
        case invalidRequest
        case connectFailed
        case timedOut
        case tlsFailure
        case certificateRejected
        case responseTooLarge
        case cancelled
        case shutdown
        case transport
    }

    private let code: Code

    /// Human-readable detail (usually libcurl's message) for logs. Not
    /// stable: never match on it and never use it as a metric label.
    public let reason: String

    private init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The kind without any detail, safe as a low-cardinality metric label.
    public var shortDescription: String { code.rawValue }

    /// Kind plus detail, which is what logs want when the error is
    /// interpolated.
    public var description: String { "\(code.rawValue): \(reason)" }

    /// Kind-only equality so callers can compare against the static values
    /// below without knowing the reason text.
    public static func == (lhs: HTTPClientError, rhs: HTTPClientError) -> Bool {
        lhs.code == rhs.code
    }
}

extension HTTPClientError {
    /// The URL did not parse, had no host, or used a scheme other than http
    /// and https. Nothing was sent.
    public static let invalidURL = HTTPClientError(.invalidURL, "invalid URL")
    /// The request itself was malformed (unsupported method, header with
    /// CR/LF, HEAD with a body, bad configuration). Nothing was sent.
    public static let invalidRequest = HTTPClientError(.invalidRequest, "invalid request")
    /// DNS resolution or the TCP connect failed, so the server never saw
    /// the request and retrying elsewhere is safe.
    public static let connectFailed = HTTPClientError(.connectFailed, "connect failed")
    /// The connect or total deadline expired; the server may or may not
    /// have processed the request.
    public static let timedOut = HTTPClientError(.timedOut, "timed out")
    /// The TLS handshake failed for a reason other than the server's
    /// certificate (no common cipher or protocol, a broken handshake), or the
    /// configured CA bundle is unusable.
    public static let tlsFailure = HTTPClientError(.tlsFailure, "TLS failure")
    /// The server's certificate failed verification: self-signed or from an
    /// untrusted CA, expired, or not for this host. Verification is never
    /// disabled, and nothing was sent over the connection.
    public static let certificateRejected = HTTPClientError(.certificateRejected, "certificate rejected")
    /// Headers or body exceeded `maxResponseBytes`; the transfer was
    /// aborted to bound memory use per request.
    public static let responseTooLarge = HTTPClientError(.responseTooLarge, "response too large")
    /// The awaiting task was cancelled; the transfer was abandoned.
    public static let cancelled = HTTPClientError(.cancelled, "cancelled")
    /// The client was shut down before the request completed.
    public static let shutdown = HTTPClientError(.shutdown, "client shut down")
    /// Any other network or protocol failure after connecting (reset,
    /// malformed response, too many redirects, ...).
    public static let transport = HTTPClientError(.transport, "transport error")

    /// Factory with detail, for fakes and tests in other modules.
    public static func invalidURL(_ reason: String) -> HTTPClientError { .init(.invalidURL, reason) }
    /// Factory with detail, for fakes and tests in other modules.
    public static func invalidRequest(_ reason: String) -> HTTPClientError { .init(.invalidRequest, reason) }
    /// Factory with detail, for fakes and tests in other modules.
    public static func connectFailed(_ reason: String) -> HTTPClientError { .init(.connectFailed, reason) }
    /// Factory with detail, for fakes and tests in other modules.
    public static func timedOut(_ reason: String) -> HTTPClientError { .init(.timedOut, reason) }
    /// Factory with detail, for fakes and tests in other modules.
    public static func tlsFailure(_ reason: String) -> HTTPClientError { .init(.tlsFailure, reason) }
    /// Factory with detail, for fakes and tests in other modules.
    public static func certificateRejected(_ reason: String) -> HTTPClientError { .init(.certificateRejected, reason) }
    /// Factory with detail, for fakes and tests in other modules.
    public static func responseTooLarge(_ reason: String) -> HTTPClientError { .init(.responseTooLarge, reason) }
    /// Factory with detail, for fakes and tests in other modules.
    public static func cancelled(_ reason: String) -> HTTPClientError { .init(.cancelled, reason) }
    /// Factory with detail, for fakes and tests in other modules.
    public static func shutdown(_ reason: String) -> HTTPClientError { .init(.shutdown, reason) }
    /// Factory with detail, for fakes and tests in other modules.
    public static func transport(_ reason: String) -> HTTPClientError { .init(.transport, reason) }
}
