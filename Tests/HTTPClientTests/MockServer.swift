import Foundation
import GatehouseTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A real local HTTP(S) server in a python3 child process, one per test so
/// connection counts never mix between tests running in parallel.
final class MockServer {
    let port: Int
    let scheme: String
    private let process: Process
    private let stdin: Pipe

    var baseURL: String { "\(scheme)://127.0.0.1:\(port)" }

    struct StartupError: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts the server off the cooperative thread pool: waiting for
    /// python to print its port blocks, and blocking the (2-thread) pool
    /// would delay other tests' resumptions and skew their timings.
    static func start(certificate: String? = nil, key: String? = nil) async throws -> MockServer {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                do {
                    continuation.resume(returning: try MockServer(certificate: certificate, key: key))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Blocking start; use `start` from async code.
    private init(certificate: String?, key: String?) throws {
        let process = Process()
        let (executable, prefix) = Self.python
        process.executableURL = URL(fileURLWithPath: executable)
        var arguments = prefix + ["-c", mockServerScript]
        if let certificate, let key {
            arguments += [certificate, key]
        }
        process.arguments = arguments
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try launch(process)
        self.process = process
        self.stdin = stdin
        self.scheme = certificate == nil ? "http" : "https"

        // Read the single port line (blocking, but python starts in ~50ms).
        var line = Data()
        let reader = stdout.fileHandleForReading
        while !line.contains(0x0A) {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let port = Int(text) else {
            process.terminate()
            throw StartupError(description: "mock server did not report a port: \(text)")
        }
        self.port = port
    }

    deinit {
        stop()
    }

    func stop() {
        try? stdin.fileHandleForWriting.close()
        if process.isRunning {
            process.terminate()
        }
    }

    /// Prefer the system interpreter: pyenv shims add startup latency.
    private static var python: (executable: String, arguments: [String]) {
        if let override = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_PYTHON"] {
            return (override, [])
        }
        for candidate in ["/usr/bin/python3", "/usr/local/bin/python3"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return (candidate, [])
        }
        return ("/usr/bin/env", ["python3"])
    }
}

/// A self-signed certificate for 127.0.0.1 made with the openssl CLI in a
/// fresh temporary directory.
struct SelfSignedCertificate {
    let directory: URL
    var certificatePath: String { directory.appendingPathComponent("cert.pem").path }
    var keyPath: String { directory.appendingPathComponent("key.pem").path }

    /// Runs openssl off the cooperative pool, for the same reason as
    /// `MockServer.start`.
    static func make(subjectAltName: String = "IP:127.0.0.1,DNS:localhost") async throws -> SelfSignedCertificate {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                do {
                    continuation.resume(returning: try SelfSignedCertificate(subjectAltName: subjectAltName))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    private init(subjectAltName: String) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("gatehouse-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=\(subjectAltName)",
            "-keyout", directory.appendingPathComponent("key.pem").path,
            "-out", directory.appendingPathComponent("cert.pem").path,
        ]
        openssl.standardOutput = FileHandle.nullDevice
        openssl.standardError = FileHandle.nullDevice
        try launch(openssl)
        openssl.waitUntilExit()
        guard openssl.terminationStatus == 0 else {
            throw MockServer.StartupError(description: "openssl failed: \(openssl.terminationStatus)")
        }
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}
