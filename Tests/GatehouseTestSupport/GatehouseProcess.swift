import Foundation

/// The real `gatehouse` binary run as a child process, as an operator would run it.
public final class GatehouseProcess: Sendable {
    /// The binary SwiftPM built next to the test bundle.
    public static var binaryPath: String {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        return testBinary.deletingLastPathComponent().appendingPathComponent("gatehouse").path
    }

    private let process: Process
    // Kept whole: tests read the start-up line and search the full log.
    private let stdout = ChildOutput(limit: nil)
    private let stderr = ChildOutput(limit: nil)
    private let exitWatch: ExitWatch

    /// Starts `gatehouse ARGUMENTS` in `directory` with only `environment` (plus PATH), so a
    /// developer's own GATEHOUSE_* variables cannot change what the test sees. A process that
    /// ends unless `stop`ped is reported on stderr, except a command meant to end by itself.
    public init(_ arguments: [String], environment: [String: String] = [:], directory: String, endsByItself: Bool = false) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binaryPath)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.environment = environment.merging(["PATH": "/usr/bin:/bin"]) { mine, _ in mine }
        let stdoutPipe = Pipe()
        let stderrPipe = Pipe()
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        process.standardInput = FileHandle.nullDevice
        exitWatch = ExitWatch(process, name: "gatehouse \(arguments.first ?? "")", output: stderr, expected: endsByItself)
        try launch(process)
        stdout.collect(from: stdoutPipe.fileHandleForReading)
        stderr.collect(from: stderrPipe.fileHandleForReading)
    }

    /// A test that throws before stopping its gateway must not leave the process behind.
    deinit {
        exitWatch.expectExit()
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    public var standardOutput: String { stdout.text }
    public var standardError: String { stderr.text }
    public var isRunning: Bool { process.isRunning }
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Waits for the "Gatehouse listening" log line and returns the bound port.
    public func port(timeout: Duration = .seconds(30)) async throws -> UInt16 {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let port = Self.listeningPort(in: standardError) { return port }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw RawHTTPError("gatehouse did not report a port; stderr:\n\(standardError)")
    }

    static func listeningPort(in log: String) -> UInt16? {
        for line in log.split(separator: "\n") where line.contains("Gatehouse listening") {
            guard let range = line.range(of: #""listen.port":""#) else { continue }
            let digits = line[range.upperBound...].prefix { $0.isNumber }
            return UInt16(digits)
        }
        return nil
    }

    /// Sends `signal` and waits for the exit status.
    @discardableResult
    public func stop(signal: Int32? = nil, timeout: Duration = .seconds(30)) async throws -> Int32 {
        exitWatch.expectExit()
        if process.isRunning { kill(process.processIdentifier, signal ?? SIGTERM) }
        return try await waitForExit(timeout: timeout)
    }

    public func waitForExit(timeout: Duration = .seconds(60)) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                kill(process.processIdentifier, SIGKILL)
                throw RawHTTPError("gatehouse did not exit in time")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        // The readers reach end of file once they have taken the last bytes.
        let drained = ContinuousClock.now + .seconds(5)
        while !(stdout.ended && stderr.ended), ContinuousClock.now < drained {
            try await Task.sleep(for: .milliseconds(5))
        }
        return process.terminationStatus
    }

    /// Runs one CLI command to completion.
    public static func run(_ arguments: [String], environment: [String: String] = [:], directory: String) async throws
        -> (status: Int32, stdout: String, stderr: String)
    {
        let child = try GatehouseProcess(arguments, environment: environment, directory: directory, endsByItself: true)
        let status = try await child.waitForExit()
        return (status, child.standardOutput, child.standardError)
    }
}

/// A working directory with a providers folder, so each test has its own data and catalogue.
public struct Workspace: Sendable {
    public let path: String

    public init(providers: [String: String] = Workspace.defaultProviders) throws {
        path = TemporaryDirectory.make()
        for (id, document) in providers {
            let directory = path + "/providers/" + id
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try document.write(toFile: directory + "/provider.json", atomically: true, encoding: .utf8)
        }
    }

    public var providers: String { path + "/providers" }

    /// Two small but valid definitions, enough for keysets and listings.
    public static let defaultProviders = [
        "github": #"{"name": "GitHub", "oauth2": {"authorize": "https://github.example/authorize", "access_token": "https://github.example/token"}}"#,
        "google": #"{"name": "Google", "oauth2": {"authorize": "https://google.example/authorize", "access_token": "https://google.example/token"}}"#,
    ]

    /// Every byte of every file under `relative`, for scanning what reached the disk.
    public func allBytes(under relative: String) -> [UInt8] {
        let root = path + "/" + relative
        guard let names = FileManager.default.enumerator(atPath: root) else { return [] }
        var bytes: [UInt8] = []
        for case let name as String in names {
            if let data = FileManager.default.contents(atPath: root + "/" + name) { bytes += data }
        }
        return bytes
    }
}

extension Array where Element == UInt8 {
    /// True if `needle` occurs anywhere in these bytes.
    public func contains(bytes needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        let first = needle[0]
        var index = 0
        while index <= count - needle.count {
            if self[index] == first, Array(self[index..<(index + needle.count)]) == needle { return true }
            index += 1
        }
        return false
    }
}
