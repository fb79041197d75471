import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A python3 script from `Tests/Fixtures` run as a child process on 127.0.0.1, speaking the
/// protocol the mock scripts share: `--port 0`, one `PORT <n>` line on stdout, exit on SIGTERM
/// or stdin EOF, and `/_` control endpoints. `MockProvider` and `MockApple` wrap one each.
final class MockProcess: Sendable {
    /// How long `init` waits for the script to print its port.
    static let startupTimeout: Double = 10

    let port: UInt16

    private let process: Process
    /// Our end of the child's stdin. The script exits when it closes, so a test run that dies
    /// without calling `stop` leaves no orphaned mock behind.
    private let stdinWriter: FileHandle
    private let errors: ChildOutput
    private let exitWatch: ExitWatch
    private let stopped = Mutex(false)

    /// Launches `python3 Tests/Fixtures/<scriptName> --port 0 <arguments> --exit-on-stdin-eof`
    /// and waits for its `PORT <n>` line. It blocks, so callers run it through `offPool`, never
    /// on the cooperative pool.
    /// - Parameter name: what error messages call the script, e.g. "mock provider".
    init(scriptName: String, arguments: [String] = [], name: String) throws {
        let script = Self.scriptPath(scriptName)
        guard FileManager.default.fileExists(atPath: script) else {
            throw MockProviderError("\(name) script not found at \(script)")
        }
        let (executable, prefix) = try Self.python()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = prefix + [script, "--port", "0"] + arguments + ["--exit-on-stdin-eof"]
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        let errors = ChildOutput()
        let exitWatch = ExitWatch(process, name: name, output: errors)
        do {
            try launch(process)
        } catch {
            throw MockProviderError("could not launch \(executable) \(script): \(error)")
        }
        errors.collect(from: stderr.fileHandleForReading)

        let reader = stdout.fileHandleForReading
        let line = Self.readLine(from: reader.fileDescriptor, timeout: Self.startupTimeout)
        guard let port = Self.port(in: line.text) else {
            exitWatch.expectExit()
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            let status = Self.reap(process, within: 2)
            errors.waitForEnd(within: 1)
            let why: String
            if line.timedOut {
                why = "did not print its port within \(Int(Self.startupTimeout)) s"
            } else if let status {
                why = "exited with status \(status) before printing its port"
            } else {
                why = "printed \(line.text.debugDescription) instead of \"PORT <n>\""
            }
            try? stdin.fileHandleForWriting.close()
            throw MockProviderError("\(executable) \(script) \(why); stderr:\n\(errors.text)")
        }
        // Nothing else should come on stdout, but never let a full pipe stall the child.
        Self.drain(reader)
        self.port = port
        self.process = process
        self.stdinWriter = stdin.fileHandleForWriting
        self.errors = errors
        self.exitWatch = exitWatch
    }

    deinit {
        stop()
    }

    /// Sends SIGTERM and waits (briefly) until the child has exited and been reaped.
    /// Idempotent; `deinit` calls it too.
    func stop() {
        let first = stopped.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        exitWatch.expectExit()
        try? stdinWriter.close()
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
        }
        if Self.reap(process, within: 5) == nil {
            kill(process.processIdentifier, SIGKILL)
            _ = Self.reap(process, within: 5)
        }
    }

    /// What the script wrote to stderr so far.
    var standardError: String { errors.text }

    // MARK: - Control requests

    /// One request to a `/_` endpoint on a fresh connection, with a `json` or `form` body if
    /// given; throws unless the answer is 200.
    func control(_ requestLine: String, json: String? = nil, form: String? = nil) async throws -> RawResponse {
        var text = "\(requestLine) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let body = json ?? form {
            let type = json != nil ? "application/json" : "application/x-www-form-urlencoded"
            text += "Content-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        } else {
            text += "\r\n"
        }
        let response = try await request(port: port, text)
        guard response.status == 200 else {
            throw MockProviderError("\(requestLine) answered \(response.status): \(response.text)")
        }
        return response
    }

    /// As `control`, for answers that are a JSON object. A POST without `json` still gets an
    /// empty form body, so it carries `Content-Length: 0` as HTTP/1.1 clients should.
    func controlJSON(_ requestLine: String, json: String? = nil) async throws -> [String: Any] {
        let response = try await control(requestLine, json: json, form: requestLine.hasPrefix("POST") && json == nil ? "" : nil)
        guard let object = try? JSONSerialization.jsonObject(with: Data(response.body)),
            let dictionary = object as? [String: Any]
        else {
            throw MockProviderError("\(requestLine) returned \(response.text.debugDescription)")
        }
        return dictionary
    }

    /// A JSON number as an Int, whichever way JSONSerialization boxed it.
    static func integer(_ value: Any) -> Int? {
        if let number = value as? Int { return number }
        if let number = value as? NSNumber { return number.intValue }
        return nil
    }

    // MARK: - Launch details

    /// `Tests/Fixtures/<name>`, found from this source file so any working directory works.
    static func scriptPath(_ name: String) -> String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // GatehouseTestSupport
            .deletingLastPathComponent()  // Tests
            .appendingPathComponent("Fixtures")
            .appendingPathComponent(name)
            .path
    }

    /// GATEHOUSE_TEST_PYTHON if set (as for the HTTP client's mock server), else
    /// /usr/bin/python3 (pyenv shims add startup latency), else python3 on PATH.
    static func python() throws -> (executable: String, arguments: [String]) {
        let environment = ProcessInfo.processInfo.environment
        if let override = environment["GATEHOUSE_TEST_PYTHON"], !override.isEmpty {
            return (override, [])
        }
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") {
            return ("/usr/bin/python3", [])
        }
        for directory in (environment["PATH"] ?? "").split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/python3"
            if FileManager.default.isExecutableFile(atPath: candidate) { return (candidate, []) }
        }
        throw MockProviderError("python3 not found: neither /usr/bin/python3 nor python3 on PATH")
    }

    static func port(in line: String) -> UInt16? {
        let parts = line.split(separator: " ")
        guard parts.count == 2, parts[0] == "PORT", let port = UInt16(parts[1]), port != 0 else { return nil }
        return port
    }

    /// Reads up to the first newline, polling so a silent child cannot hold us past `timeout`.
    static func readLine(from descriptor: Int32, timeout: Double) -> (text: String, timedOut: Bool) {
        let deadline = Date().addingTimeInterval(timeout)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 256)
        while !bytes.contains(0x0A) {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return (String(decoding: bytes, as: UTF8.self), true) }
            var descriptorSet = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptorSet, 1, Int32(min(remaining * 1000, 1000).rounded(.up)))
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { continue }
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }  // EOF: the child exited (or closed stdout)
            bytes += chunk[0..<count]
        }
        let line = bytes.split(separator: 0x0A, maxSplits: 1, omittingEmptySubsequences: false).first ?? []
        return (String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines), false)
    }

    /// Waits up to `seconds` for Foundation to reap the child; its exit status, or nil if still running.
    @discardableResult
    static func reap(_ process: Process, within seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning {
            if Date() >= deadline { return nil }
            usleep(2_000)
        }
        return process.terminationStatus
    }

    /// Reads and discards until EOF on a thread of its own.
    static func drain(_ handle: FileHandle) {
        Thread.detachNewThread {
            while !readChunk(handle).isEmpty {}
        }
    }

    /// One blocking read(2) of up to 64 KiB; empty at EOF or on error. Unlike
    /// `FileHandle.availableData` it never traps. `handle` stays captured, so its
    /// descriptor cannot be closed and reused underneath the read.
    static func readChunk(_ handle: FileHandle) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            return count > 0 ? Array(buffer[0..<count]) : []
        }
    }
}

/// One of a child's output pipes, collected by a reader thread until EOF: a blocking read,
/// not a readability handler, whose asynchronously cancelled dispatch source could outlive
/// the pipe while its descriptor is reused by a test's socket. Keeps the last `limit` bytes,
/// or everything without one.
final class ChildOutput: Sendable {
    private let state = Mutex<(bytes: [UInt8], ended: Bool)>(([], false))
    private let limit: Int?

    init(limit: Int? = 64 * 1024) {
        self.limit = limit
    }

    func collect(from handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let data = MockProcess.readChunk(handle)
                if data.isEmpty { break }
                state.withLock { state in
                    state.bytes += data
                    if let limit, state.bytes.count > limit { state.bytes.removeFirst(state.bytes.count - limit) }
                }
            }
            state.withLock { $0.ended = true }
        }
    }

    /// True once the reader has taken everything up to end of file.
    var ended: Bool { state.withLock { $0.ended } }

    /// Gives the reader a moment to pick up what a just-exited child wrote last.
    func waitForEnd(within seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        while !ended && Date() < deadline { usleep(2_000) }
    }

    var text: String { state.withLock { String(decoding: $0.bytes, as: UTF8.self) } }
}

/// What every mock server wrapper shares: one Python fixture process, its port, its stderr.
/// The wrappers add the fixture's own control calls.
public class FixtureServer: @unchecked Sendable {
    // `@unchecked`: the only state is immutable, and MockProcess is Sendable.
    let child: MockProcess
    public let port: UInt16

    init(child: MockProcess) {
        self.child = child
        self.port = child.port
    }

    /// `http://127.0.0.1:<port>`; for the Apple mock also the issuer and the client_secret `aud`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Sends SIGTERM and waits (briefly) until the child has exited and been reaped.
    /// Idempotent; dropping the last reference stops the child too.
    public func stop() {
        child.stop()
    }

    /// What the script wrote to stderr so far (tracebacks; request logs with --verbose).
    public var standardError: String { child.standardError }
}
