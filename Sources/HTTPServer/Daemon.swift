internal import CMicroHTTPD
internal import GatehouseCore
internal import Synchronization

/// Owns the libmicrohttpd daemon. The C callbacks below reach it through the `void*`
/// context, so it must outlive the daemon: `shutdown` stops the daemon before release.
///
/// `@unchecked Sendable` because it holds the daemon pointer, which libmicrohttpd itself
/// synchronises; the Swift state is atomics and a mutex.
final class Daemon: @unchecked Sendable {
    let router: Router
    let logger: Logger
    let configuration: HTTPServer.Configuration
    private(set) var port: UInt16 = 0
    private let handle: Mutex<DaemonPointer?>
    private let listener: Listener
    private let draining = Atomic<Bool>(false)
    private let inFlightCount = Atomic<Int>(0)
    let watchdog: Watchdog

    /// A connection's memory beyond the header limit, which the limit is checked against
    /// (`Exchange`): libmicrohttpd keeps a record per header and builds the answer's headers
    /// there too. With no more memory than the limit, a head within a few hundred bytes of it
    /// was closed unanswered, or left unanswered until the idle timeout.
    static let headroomBytes = 4 << 10

    init(configuration: HTTPServer.Configuration, router: Router, logger: Logger) throws(HTTPServerError) {
        self.router = router
        self.logger = logger
        self.configuration = configuration
        self.handle = Mutex(nil)
        watchdog = try Watchdog()
        listener = try Listener(address: configuration.address, backlog: 1024, logger: logger)
        let context = Unmanaged.passUnretained(self).toOpaque()
        // MHD_OPTION_STRICT_FOR_CLIENT stays at 0. At 1, libmicrohttpd 0.9.75 refuses a missing
        // Host with its own HTML page; at -1 (which later versions read as "most lenient"),
        // whitespace before a colon. `RequestHead` makes both checks and more, with JSON answers.
        var options: [MHD_OptionItem] = [
            MHD_OptionItem(option: .THREAD_POOL_SIZE, value: max(1, configuration.threads), ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: configuration.idleTimeoutSeconds, ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_LIMIT, value: configuration.maxConnections, ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_MEMORY_LIMIT, value: configuration.maxHeaderBytes + Self.headroomBytes, ptr_value: nil),
            MHD_OptionItem(option: .END, value: 0, ptr_value: nil),
        ]
        // ITC: a connection added from the listener's thread wakes its worker at once.
        let flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_NO_LISTEN_SOCKET.rawValue | MHD_USE_ITC.rawValue
        let started: OpaquePointer? = options.withUnsafeMutableBufferPointer { optionBuffer in
            gh_mhd_start(UInt32(flags), accessHandler, context, completionHandler, context, optionBuffer.baseAddress)
        }
        guard let started else {
            listener.stop()
            throw .startFailed("cannot start the HTTP server on \(configuration.address)")
        }
        let daemon = DaemonPointer(raw: started)
        handle.withLock { $0 = daemon }
        port = listener.port
        do throws(HTTPServerError) {
            try listener.start(daemon: daemon)
        } catch {
            listener.stop()
            handle.withLock { current in
                MHD_stop_daemon(started)
                current = nil
            }
            throw error
        }
    }

    var inFlight: Int { inFlightCount.load(ordering: .relaxed) }

    func shutdown(drainTimeout: Duration) async {
        let running: Bool = handle.withLock { current in
            current != nil && !draining.exchange(true, ordering: .relaxed)
        }
        guard running else { return }
        // Stop accepting first so the drain below cannot be fed forever; from here the
        // kernel refuses new connections.
        listener.stop()
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: drainTimeout)
        while inFlightCount.load(ordering: .acquiring) > 0, clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        let remaining = inFlightCount.load(ordering: .acquiring)
        if remaining > 0 {
            logger.warning("Drain timed out; closing remaining connections", ["requests.in_flight": "\(remaining)"])
        }
        handle.withLock { current in
            guard let daemon = current else { return }
            MHD_stop_daemon(daemon.raw)
            current = nil
        }
        watchdog.stop()
    }

    func requestStarted() { inFlightCount.add(1, ordering: .relaxed) }
    func requestFinished() { inFlightCount.subtract(1, ordering: .releasing) }
}

/// The daemon pointer, sendable so the mutex can hold it; only `Daemon` dereferences it.
struct DaemonPointer: @unchecked Sendable {
    let raw: OpaquePointer
}
