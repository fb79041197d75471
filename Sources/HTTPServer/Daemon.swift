internal import CMicroHTTPD
internal import GatehouseCore
internal import Synchronization
#if canImport(Glibc)
internal import Glibc
#endif

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
    private let quiescedSocket = Atomic<Int32>(-1)
    private let inFlightCount = Atomic<Int>(0)
    let watchdog = Watchdog()

    init(configuration: HTTPServer.Configuration, router: Router, logger: Logger) throws(HTTPServerError) {
        self.router = router
        self.logger = logger
        self.configuration = configuration
        self.handle = Mutex(nil)
        let context = Unmanaged.passUnretained(self).toOpaque()
        var options: [MHD_OptionItem] = [
            MHD_OptionItem(option: .THREAD_POOL_SIZE, value: max(1, configuration.threads), ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: configuration.idleTimeoutSeconds, ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_LIMIT, value: configuration.maxConnections, ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_MEMORY_LIMIT, value: configuration.maxHeaderBytes, ptr_value: nil),
            MHD_OptionItem(option: .LISTEN_BACKLOG_SIZE, value: 1024, ptr_value: nil),
            MHD_OptionItem(option: .END, value: 0, ptr_value: nil),
        ]
        var flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue
        if configuration.address.family == .ipv6 { flags |= MHD_USE_IPv6.rawValue }
        let started: OpaquePointer? = try Self.withSocketAddress(configuration.address) { address in
            options.withUnsafeMutableBufferPointer { optionBuffer in
                gh_mhd_start(
                    UInt32(flags), address, accessHandler, context, completionHandler, context,
                    optionBuffer.baseAddress)
            }
        }
        guard let started else {
            throw .startFailed("cannot listen on \(configuration.address): address in use, not local, or not permitted")
        }
        handle.withLock { $0 = DaemonPointer(raw: started) }
        port = gh_mhd_bound_port(started)
        watchdog.start()
    }

    var inFlight: Int { inFlightCount.load(ordering: .relaxed) }

    func shutdown(drainTimeout: Duration) async {
        let running: Bool = handle.withLock { current in
            guard let daemon = current, quiescedSocket.load(ordering: .relaxed) < 0 else { return false }
            // Stop accepting first so the drain below cannot be fed forever.
            quiescedSocket.store(MHD_quiesce_daemon(daemon.raw), ordering: .relaxed)
            return true
        }
        guard running else { return }
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
        let socket = quiescedSocket.exchange(-1, ordering: .relaxed)
        if socket >= 0 { close(socket) }
    }

    func requestStarted() { inFlightCount.add(1, ordering: .relaxed) }
    func requestFinished() { inFlightCount.subtract(1, ordering: .releasing) }

    private static func withSocketAddress<R>(
        _ address: ListenAddress, _ body: (UnsafePointer<sockaddr>) -> R
    ) throws(HTTPServerError) -> R {
        switch address.family {
        case .ipv4:
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_port = address.port.bigEndian
            guard inet_pton(AF_INET, address.host, &socketAddress.sin_addr) == 1 else {
                throw .invalidAddress("\(address.host) is not an IPv4 address")
            }
            return withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0) }
            }
        case .ipv6:
            var socketAddress = sockaddr_in6()
            socketAddress.sin6_family = sa_family_t(AF_INET6)
            socketAddress.sin6_port = address.port.bigEndian
            guard inet_pton(AF_INET6, address.host, &socketAddress.sin6_addr) == 1 else {
                throw .invalidAddress("\(address.host) is not an IPv6 address")
            }
            return withUnsafePointer(to: &socketAddress) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0) }
            }
        }
    }
}

/// The daemon pointer, sendable so the mutex can hold it; only `Daemon` dereferences it.
struct DaemonPointer: @unchecked Sendable {
    let raw: OpaquePointer
}

func systemProcessorCount() -> Int {
    max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
}
