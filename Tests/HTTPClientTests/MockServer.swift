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

/// A TCP port on 127.0.0.1 with nothing listening: bind an ephemeral port,
/// then close it. Connecting gets ECONNREFUSED.
func closedLocalPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw MockServer.StartupError(description: "socket failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard bound == 0 else { throw MockServer.StartupError(description: "bind failed") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            getsockname(fd, $0, &length)
        }
    }
    guard named == 0 else { throw MockServer.StartupError(description: "getsockname failed") }
    return Int(UInt16(bigEndian: address.sin_port))
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
