import Foundation

/// The `openssl` command line in a private temporary directory. A copy of the helper in
/// GatehouseCryptoTests: the two test targets share no support module.
final class OpenSSLTool {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-jose-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    func write(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: directory.appendingPathComponent(name))
    }

    func read(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    /// Runs `openssl ARGUMENTS` in the directory and returns its standard output; throws with
    /// standard error if it exits non-zero.
    @discardableResult
    func run(_ arguments: [String]) throws -> String {
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
        try process.run()
        process.waitUntilExit()
        let output = String(decoding: try Data(contentsOf: stdout), as: UTF8.self)
        guard process.terminationStatus == 0 else {
            let errors = String(decoding: try Data(contentsOf: stderr), as: UTF8.self)
            throw Failure(description: "openssl \(arguments.joined(separator: " ")) failed: \(output)\(errors)")
        }
        return output
    }
}
