#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Gatehouse's outbound HTTP client: a thin async facade over one libcurl
/// multi handle driven by one dedicated thread.
///
/// One instance should be shared process-wide so requests share a
/// connection pool, DNS cache and TLS session cache. The client never
/// retries a request itself; see `EasyHandle.configure` for what libcurl
/// does on dead pooled connections and how non-idempotent requests are
/// protected from it.
public final class HTTPClient: Sendable {
    private let configuration: Configuration
    private let engine: CurlMulti
    private let handles: EasyHandlePool

    /// Starts the worker thread. Throws `.invalidRequest` for a nonsensical
    /// configuration and `.tlsFailure` for an unreadable CA bundle, so
    /// misconfiguration fails at startup rather than on the first request.
    public init(configuration: Configuration = .init()) throws(HTTPClientError) {
        try configuration.validate()
        self.configuration = configuration
        // As many idle handles as transfers can run at once.
        self.handles = EasyHandlePool(capacity: configuration.maxTotalConnections)
        self.engine = try CurlMulti.start(configuration: configuration)
    }

    /// Shutting down here means a forgotten `shutdown()` still stops the
    /// thread and closes pooled connections instead of leaking them.
    deinit {
        engine.shutdown()
    }

    /// Performs one request and returns any HTTP response, including 4xx
    /// and 5xx; only failures to obtain a response throw.
    ///
    /// Cancelling the calling task abandons the transfer and throws
    /// `.cancelled` promptly; the request may already have reached the
    /// server.
    public func execute(_ request: HTTPClientRequest) async throws(HTTPClientError) -> HTTPClientResponse {
        let handle = try EasyHandle.make(for: request, configuration: configuration, pool: handles)
        let engine = self.engine
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                handle.completion.install(continuation)
                if !handle.completion.isResolved {
                    engine.submit(handle)
                }
            }
        } onCancel: {
            // Resume the task first, then let the worker detach the handle.
            if handle.completion.resolve(.failure(.cancelled)) {
                engine.cancel(handle)
            }
        }
        return try outcome.get()
    }

    /// Fails queued and in-flight requests with `.shutdown`, closes pooled
    /// connections and joins the worker thread. Later `execute` calls fail
    /// with `.shutdown`. Safe to call repeatedly and from any thread; it
    /// blocks only until the worker notices, which is prompt because it is
    /// woken explicitly.
    public func shutdown() {
        engine.shutdown()
    }

    /// New TCP connections opened so far (sum of CURLINFO_NUM_CONNECTS over
    /// finished, cancelled and shut-down transfers). Exported as a metric: it should grow far slower
    /// than the request count when pooling works.
    public var connectionsOpened: Int {
        engine.connectionsOpened
    }
}

extension HTTPClient {
    /// Limits and policy for one client. TLS verification is intentionally
    /// absent: it is always on.
    public struct Configuration: Sendable {
        /// Deadline for DNS + TCP + TLS handshake, kept short so an
        /// unreachable upstream fails fast.
        public var connectTimeout: Duration = .seconds(10)
        /// Deadline for the whole exchange, including waiting for a free
        /// pooled connection; `HTTPClientRequest.timeout` overrides it.
        public var totalTimeout: Duration = .seconds(30)
        /// Cap on the decoded body (and, separately, on all header bytes) so
        /// a hostile or broken upstream cannot exhaust memory.
        public var maxResponseBytes: Int = 4 << 20
        /// Parallel connections to one host; extra requests wait in libcurl.
        public var maxConnectionsPerHost: Int = 16
        /// Parallel connections overall, also the size of the idle pool.
        public var maxTotalConnections: Int = 64
        /// Extra trusted CA file (PEM), meant for tests with private CAs.
        /// Verification stays on either way.
        public var caBundlePath: String? = nil
        /// Sent as User-Agent so upstream logs can identify Gatehouse.
        public var userAgent: String = "Gatehouse"

        /// All defaults; override fields individually.
        public init() {}

        /// Rejects values libcurl would misread (0 means "unlimited" for
        /// most of these options, the opposite of what a caller meant).
        func validate() throws(HTTPClientError) {
            guard connectTimeout > .zero, totalTimeout > .zero else {
                throw .invalidRequest("timeouts must be positive")
            }
            guard maxResponseBytes > 0, maxConnectionsPerHost > 0, maxTotalConnections > 0 else {
                throw .invalidRequest("limits must be positive")
            }
            guard !userAgent.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw .invalidRequest("userAgent contains CR, LF or NUL")
            }
            if let caBundlePath, access(caBundlePath, R_OK) != 0 {
                throw .tlsFailure("CA bundle not readable: \(caBundlePath)")
            }
        }
    }
}
