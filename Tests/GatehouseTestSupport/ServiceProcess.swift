import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A system daemon (redis-server, nginx) run in the foreground by a test on a loopback port,
/// under `Tests/Fixtures/supervise.py`, which kills it when the test process goes away.
/// Its output goes to a log file, never a pipe, so nothing can stall on a full pipe buffer;
/// readiness is a successful TCP connect.
public final class ServiceProcess: Sendable {
    public let port: UInt16
    public let logPath: String
    /// The daemon's own pid (not the supervisor's), for SIGSTOP/SIGCONT.
    public let processIdentifier: Int32
    private let supervisor: Process
    /// Our end of the supervisor's stdin: closing it (or dying) stops the daemon.
    private let lifeline: FileHandle
    private let closed = Mutex(false)

    /// Starts `executable arguments` and waits until `port` accepts connections and, if given,
    /// `readyLine` is in the log: a port chosen before the daemon binds it can be taken in
    /// between, and then only the daemon's own word tells its listener from someone else's.
    public init(
        name: String, executable: String, arguments: [String], port: UInt16, logPath: String, readyLine: String? = nil,
        timeout: Double = 10
    ) throws {
        guard let found = Self.locate(executable) else {
            throw RawHTTPError("\(name): \(executable) is not installed (scripts/install-deps --test installs it)")
        }
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        guard let log = FileHandle(forWritingAtPath: logPath) else { throw RawHTTPError("\(name): cannot write \(logPath)") }
        let pidFile = logPath + ".pid"
        try? FileManager.default.removeItem(atPath: pidFile)
        let (python, prefix) = try MockProcess.python()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = prefix + [MockProcess.scriptPath("supervise.py"), pidFile, found] + arguments
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = log
        process.standardError = log
        try launch(process)
        try? log.close()
        supervisor = process
        lifeline = stdin.fileHandleForWriting
        self.port = port
        self.logPath = logPath
        let deadline = Date().addingTimeInterval(timeout)
        var pid: Int32?
        func saysReady() -> Bool {
            guard let readyLine else { return true }
            return (try? String(contentsOfFile: logPath, encoding: .utf8))?.contains(readyLine) ?? false
        }
        while pid == nil || !saysReady() || !Self.accepts(port: port) {
            if pid == nil { pid = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap { Int32($0) } }
            guard process.isRunning, Date() < deadline else {
                try? stdin.fileHandleForWriting.close()
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                throw RawHTTPError("\(name) did not start on port \(port); log:\n\(text.suffix(2000))")
            }
            usleep(10_000)
        }
        processIdentifier = pid ?? -1
    }

    deinit {
        stop(signal: SIGKILL)
    }

    public var isRunning: Bool { supervisor.isRunning }

    /// Sends `signal` (SIGTERM by default) to the daemon and waits for it to exit.
    public func stop(signal: Int32 = 15) {
        if supervisor.isRunning {
            kill(processIdentifier, SIGCONT)
            kill(processIdentifier, signal)
            if MockProcess.reap(supervisor, within: 10) == nil {
                kill(processIdentifier, SIGKILL)
                _ = MockProcess.reap(supervisor, within: 5)
            }
        }
        let first = closed.withLock { done in defer { done = true }; return !done }
        if first { try? lifeline.close() }
    }

    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    static func accepts(port: UInt16) -> Bool {
        (try? RawHTTPConnection(port: port, timeoutMilliseconds: 200)) != nil
    }

    /// Absolute paths are used as given; otherwise the usual system directories are searched
    /// (daemons like nginx live in /usr/sbin, which a test's PATH may lack).
    static func locate(_ executable: String) -> String? {
        if executable.hasPrefix("/") { return FileManager.default.isExecutableFile(atPath: executable) ? executable : nil }
        for directory in ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"] {
            let candidate = directory + "/" + executable
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// A private redis-server on a free loopback port with its own directory. Starting and
/// stopping block while the daemon comes up or goes away, so they run off the cooperative
/// pool (`offPool`): a test blocking one of its few threads would stall unrelated tests.
public final class RedisServer: Sendable {
    public let port: UInt16
    public let directory: String
    private let durable: Bool
    private let extraArguments: [String]
    private let current: Mutex<ServiceProcess?>

    /// `durable` turns on the append-only file with an fsync per write, so data survives a
    /// restart (for the outage test); otherwise nothing touches the disk.
    /// `extraArguments` go to redis-server as they are (`--requirepass x`, say).
    public static func launch(port: UInt16? = nil, durable: Bool = false, extraArguments: [String] = []) async throws -> RedisServer {
        try await offPool { try start(port: port, durable: durable, extraArguments: extraArguments) }
    }

    /// On a free port unless `port` is given. A free port can be taken by something running
    /// alongside before Redis binds it; then another is tried.
    private static func start(port: UInt16?, durable: Bool, extraArguments: [String]) throws -> RedisServer {
        var attempt = 1
        while true {
            do {
                return try RedisServer(port: port ?? freePort(), durable: durable, extraArguments: extraArguments)
            } catch where port == nil && attempt < 3 {
                attempt += 1
            }
        }
    }

    private init(port: UInt16, durable: Bool, extraArguments: [String]) throws {
        self.port = port
        self.durable = durable
        self.extraArguments = extraArguments
        directory = TemporaryDirectory.make()
        current = Mutex(nil)
        try startNow()
    }

    /// `redis://127.0.0.1:<port>/<database>`
    public func url(database: Int = 0) -> String { "redis://127.0.0.1:\(port)/\(database)" }

    /// Starts the server again on the same port and directory.
    public func restart() async throws {
        try await offPool { try self.startNow() }
    }

    private func startNow() throws {
        var arguments = ["--port", "\(port)", "--bind", "127.0.0.1", "--dir", directory, "--save", "", "--daemonize", "no", "--protected-mode", "no"]
        arguments += durable ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"]
        arguments += extraArguments
        let process = try ServiceProcess(
            name: "redis-server", executable: "redis-server", arguments: arguments, port: port, logPath: directory + "/redis.log",
            readyLine: "Ready to accept connections")
        current.withLock { $0 = process }
    }

    /// Stops the server (SIGTERM: a clean shutdown; SIGKILL: a crash) and waits for its exit.
    public func stop(signal: Int32 = 15) async {
        let process = current.withLock { value -> ServiceProcess? in defer { value = nil }; return value }
        guard let process else { return }
        _ = try? await offPool { process.stop(signal: signal) }
    }

    /// Pauses or resumes the server process: a hung Redis rather than a dead one.
    public func pause(_ paused: Bool) {
        current.withLock { value in
            if let value { kill(value.processIdentifier, paused ? SIGSTOP : SIGCONT) }
        }
    }

    /// One server shared by every test in this process that only needs *a* Redis: taken from
    /// GATEHOUSE_TEST_REDIS (`redis://host:port/db`, as .ci/run sets it) or started on demand.
    /// Tests sharing it never collide: app keys and record ids are random, and StoreTests give
    /// each store its own key prefix.
    public static func sharedURL() async throws -> String {
        if let configured = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_REDIS"], !configured.isEmpty {
            return configured
        }
        return try await offPool {
            try shared.withLock { server in
                if let server { return server.url() }
                let started = try start(port: nil, durable: false, extraArguments: [])
                server = started
                return started.url()
            }
        }
    }

    private static let shared = Mutex<RedisServer?>(nil)
}
