public import GatehouseCore
internal import Synchronization

/// The HTTP/1.1 server: libmicrohttpd with an epoll thread pool underneath, the router on top.
///
/// Handlers marked `.immediate` answer on the pool thread; `.deferred` handlers run as tasks
/// while their connection is suspended, so a slow provider never occupies a server thread.
public final class HTTPServer: Sendable {
    /// Limits and sizes. Defaults suit a small deployment on a 2-core machine.
    public struct Configuration: Sendable {
        public var address: ListenAddress
        /// Server threads (libmicrohttpd's pool); one per core by default.
        public var threads: Int
        /// Largest accepted request body; larger ones get 413.
        public var maxBodyBytes: Int
        /// Largest request line and headers together, in bytes, with the `Cookie` header
        /// counted twice (libmicrohttpd parses a copy of it); a larger head gets 414 or 431.
        public var maxHeaderBytes: Int
        /// Node's default. libmicrohttpd 0.9.75 zeroes the whole of a connection's memory, and
        /// half of it once more, after every request: with 32 KiB a request cost about 5% more
        /// CPU (`bench/apple-verify`, both sizes under load at once).
        public static let defaultMaxHeaderBytes = 16 << 10
        /// Seconds an idle connection may stay open.
        public var idleTimeoutSeconds: Int
        /// Concurrent connections accepted in total.
        public var maxConnections: Int
        /// How long a deferred handler may run before the client gets 504.
        public var handlerTimeout: Duration
        /// Called once per request when libmicrohttpd is done with it, on a server thread: it
        /// must be cheap and must not block (metrics).
        public var observer: (@Sendable (RequestObservation) -> Void)?

        public init(
            address: ListenAddress, threads: Int = ServiceThread.processorCount, maxBodyBytes: Int = 1 << 20,
            maxHeaderBytes: Int = defaultMaxHeaderBytes, idleTimeoutSeconds: Int = 30, maxConnections: Int = 4096,
            handlerTimeout: Duration = .seconds(60)
        ) {
            self.address = address
            self.threads = threads
            self.maxBodyBytes = maxBodyBytes
            self.maxHeaderBytes = maxHeaderBytes
            self.idleTimeoutSeconds = idleTimeoutSeconds
            self.maxConnections = maxConnections
            self.handlerTimeout = handlerTimeout
            self.observer = nil
        }
    }

    private let daemon: Daemon

    /// Starts listening; the returned server answers until `shutdown`.
    public init(configuration: Configuration, router: Router, logger: Logger) throws(HTTPServerError) {
        daemon = try Daemon(configuration: configuration, router: router, logger: logger)
    }

    /// The bound port, which differs from the configured one when that was 0.
    public var port: UInt16 { daemon.port }

    /// Requests accepted and not yet completed.
    public var inFlight: Int { daemon.inFlight }

    /// Stops accepting connections, waits up to `drainTimeout` for in-flight requests to
    /// finish, then closes everything. Safe to call more than once.
    public func shutdown(drainTimeout: Duration = .seconds(10)) async {
        await daemon.shutdown(drainTimeout: drainTimeout)
    }
}

/// One finished request, as the completion observer sees it.
public struct RequestObservation: Sendable {
    public var method: String
    /// The matched route pattern (`/auth/:provider`) or `Router.unmatched`.
    public var route: String
    /// The status sent; 0 if the client went away before an answer was queued.
    public var status: Int
    public var duration: Duration
}
