internal import CMicroHTTPD
internal import Dispatch
internal import GatehouseCore
internal import Synchronization
#if canImport(Glibc)
internal import Glibc
#endif

/// The listening socket, and the thread that accepts on it and hands each connection to
/// libmicrohttpd (`MHD_add_connection`).
///
/// libmicrohttpd could accept by itself, but then the only way to stop accepting before a
/// drain is `MHD_quiesce_daemon`, and with epoll worker threads that call races the workers
/// over the listen socket's removal from their epoll sets: the loser's `epoll_ctl` fails
/// and libmicrohttpd aborts the process (seen in this test suite; an open upstream defect).
/// Accepting here makes stopping ours: `stop` ends the thread and closes the socket, and
/// the kernel refuses new connections from then on. libmicrohttpd also spreads added
/// connections over its workers by descriptor, where accepting itself it let one worker
/// take nearly all of them.
final class Listener: Sendable {
    let port: UInt16
    private let socket: Int32
    /// Written once by `stop` to wake the thread out of `poll`.
    private let wake: (read: Int32, write: Int32)
    private let finished = DispatchSemaphore(value: 0)
    private let state = Mutex(State.idle)
    private let logger: Logger

    private enum State { case idle, accepting, stopped }

    /// Binds and listens; throws `startFailed` if the address is taken, not local, or not
    /// permitted.
    init(address: ListenAddress, backlog: Int32, logger: Logger) throws(HTTPServerError) {
        self.logger = logger
        let family = address.family == .ipv6 ? AF_INET6 : AF_INET
        let descriptor = Glibc.socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw .startFailed("cannot create a socket: \(String(cString: strerror(errno)))") }
        var on: Int32 = 1
        // As libmicrohttpd does: a restart may bind while old connections sit in TIME_WAIT.
        // This does not let a second process listen on the same port.
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if address.family == .ipv6 {
            setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        let failure: String?
        do throws(HTTPServerError) {
            failure = try Self.withSocketAddress(address) { pointer, length in
                if Glibc.bind(descriptor, pointer, length) != 0 { return "bind: " + String(cString: strerror(errno)) }
                if Glibc.listen(descriptor, backlog) != 0 { return "listen: " + String(cString: strerror(errno)) }
                return nil
            }
        } catch {
            close(descriptor)
            throw error
        }
        if let failure {
            close(descriptor)
            throw .startFailed("cannot listen on \(address) (\(failure))")
        }
        var pipeEnds: [Int32] = [-1, -1]
        guard gh_pipe_cloexec(&pipeEnds) == 0 else {
            close(descriptor)
            throw .startFailed("cannot create the listener's wake-up pipe: \(String(cString: strerror(errno)))")
        }
        socket = descriptor
        wake = (pipeEnds[0], pipeEnds[1])
        port = Self.boundPort(descriptor)
    }

    /// Starts the accepting thread; each accepted connection goes to `daemon`.
    func start(daemon: DaemonPointer) throws(HTTPServerError) {
        state.withLock { $0 = .accepting }
        guard ServiceThread.startDetached(name: "http-accept", { self.acceptLoop(daemon) }) else {
            state.withLock { $0 = .idle }
            throw .startFailed("cannot start the accepting thread")
        }
    }

    /// Stops accepting and closes the socket; returns once the thread will no longer touch
    /// the daemon, so the daemon may then be stopped. Later calls do nothing.
    func stop() {
        let previous = state.withLock { current -> State in
            defer { current = .stopped }
            return current
        }
        guard previous != .stopped else { return }
        if previous == .accepting {
            var byte: UInt8 = 1
            _ = write(wake.write, &byte, 1)
            finished.wait()
        }
        close(socket)
        close(wake.read)
        close(wake.write)
    }

    /// Refused connections are reported at most once a second, with their count, so that a
    /// flood at the connection limit cannot flood the log too.
    private let refusals = LogThrottle()

    private func reportRefusal() {
        guard let count = refusals.occurrence() else { return }
        logger.warning("Connections closed unserved: libmicrohttpd refused them (connection limit or memory)", [
            "connections.refused": "\(count)",
        ])
    }

    private func acceptLoop(_ daemon: DaemonPointer) {
        defer { finished.signal() }
        var descriptors = [
            pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if descriptors[1].revents != 0 { return }
            acceptPending(daemon)
        }
    }

    /// Accepts until the backlog is empty. Running out of descriptors or memory leaves the
    /// connection queued in the kernel; a short pause keeps that from spinning.
    private func acceptPending(_ daemon: DaemonPointer) {
        while true {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = Self.asSocketAddress(&address) { pointer, _ in gh_accept_cloexec(socket, pointer, &length) }
            if client < 0 {
                switch errno {
                case EINTR, ECONNABORTED, EPROTO: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM: usleep(10_000)
                default: break
                }
                return
            }
            // libmicrohttpd owns the socket from here, and closes it if it cannot serve it
            // (at the connection limit, out of memory): the client sees a close, so say why.
            let added = Self.asSocketAddress(&address) { pointer, _ in MHD_add_connection(daemon.raw, client, pointer, length) }
            if added != .YES { reportRefusal() }
        }
    }

    private static func boundPort(_ descriptor: Int32) -> UInt16 {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = asSocketAddress(&address) { pointer, _ in getsockname(descriptor, pointer, &length) == 0 }
        guard found else { return 0 }
        switch Int32(address.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) } }
        case AF_INET6:
            return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) } }
        default:
            return 0
        }
    }

    private static func withSocketAddress<R>(
        _ address: ListenAddress, _ body: (UnsafeMutablePointer<sockaddr>, socklen_t) -> R
    ) throws(HTTPServerError) -> R {
        switch address.family {
        case .ipv4:
            var socketAddress = sockaddr_in()
            socketAddress.sin_family = sa_family_t(AF_INET)
            socketAddress.sin_port = address.port.bigEndian
            guard inet_pton(AF_INET, address.host, &socketAddress.sin_addr) == 1 else {
                throw .invalidAddress("\(address.host) is not an IPv4 address")
            }
            return asSocketAddress(&socketAddress, body)
        case .ipv6:
            var socketAddress = sockaddr_in6()
            socketAddress.sin6_family = sa_family_t(AF_INET6)
            socketAddress.sin6_port = address.port.bigEndian
            guard inet_pton(AF_INET6, address.host, &socketAddress.sin6_addr) == 1 else {
                throw .invalidAddress("\(address.host) is not an IPv6 address")
            }
            return asSocketAddress(&socketAddress, body)
        }
    }

    /// Calls `body` with `address` (a `sockaddr_in`, `sockaddr_in6` or `sockaddr_storage`)
    /// seen as the `sockaddr` the socket calls take, and its size.
    private static func asSocketAddress<Address, R>(
        _ address: inout Address, _ body: (UnsafeMutablePointer<sockaddr>, socklen_t) -> R
    ) -> R {
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<Address>.size)) }
        }
    }
}
