import Foundation

/// The `openssl` command line in a private temporary directory, as an independent second
/// implementation to cross-check keys and signatures against.
public final class OpenSSLTool {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    let directory: URL

    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-openssl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// The absolute path of `name` inside the directory.
    public func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    public func write(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: directory.appendingPathComponent(name))
    }

    public func read(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    public func readText(_ name: String) throws -> String {
        String(decoding: try read(name), as: UTF8.self)
    }

    /// Runs `openssl ARGUMENTS` in the directory and returns its standard output; throws with
    /// standard error if it exits non-zero.
    @discardableResult
    public func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let stdout = directory.appendingPathComponent("stdout.txt")
        let stderr = directory.appendingPathComponent("stderr.txt")
        try Data().write(to: stdout)
        try Data().write(to: stderr)
        process.standardOutput = try FileHandle(forWritingTo: stdout)
        process.standardError = try FileHandle(forWritingTo: stderr)
        try launch(process)
        process.waitUntilExit()
        let output = String(decoding: try Data(contentsOf: stdout), as: UTF8.self)
        guard process.terminationStatus == 0 else {
            let errors = String(decoding: try Data(contentsOf: stderr), as: UTF8.self)
            throw Failure(description: "openssl \(arguments.joined(separator: " ")) failed: \(output)\(errors)")
        }
        return output
    }

    /// A fresh P-256 key as PKCS#8 PEM, the form of Apple's .p8 files.
    public func makeP256Key(_ name: String) throws -> String {
        try run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name])
        return try readText(name)
    }

    /// A fresh RSA key as PKCS#8 PEM.
    public func makeRSAKey(_ name: String, bits: Int = 2048) throws -> String {
        try run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(bits)", "-out", name])
        return try readText(name)
    }
}
