import Foundation
import GatehouseCore
import GatehouseTestSupport
import Testing

/// One run of a script in Tests/Browser: a Python program that drives headless Chromium
/// through Selenium and prints its outcome as one JSON line.
struct BrowserScript {
    static let directory = String(#filePath.dropLast("GatehouseAppTests/BrowserScript.swift".count)) + "Browser/"

    /// Where the scripts save their screenshots: `GATEHOUSE_SCREENSHOTS` if set, else
    /// `.build/screenshots` in the package, kept after the run for a look (the build folder is
    /// not committed; each run overwrites the last one's pictures).
    static let screenshots: String = {
        if let chosen = ProcessInfo.processInfo.environment["GATEHOUSE_SCREENSHOTS"], !chosen.isEmpty { return chosen }
        return String(directory.dropLast("Tests/Browser/".count)) + ".build/screenshots"
    }()

    /// The outcome the script printed, and its whole last line for failure messages.
    struct Outcome {
        let json: JSONValue
        let line: String
    }

    /// Runs `name` with `arguments` and returns what it printed. Give values as
    /// `--option=value` in one piece: a random app key may start with "-", which argparse would
    /// otherwise take for an option (it did, one run in about 64).
    static func run(_ name: String, _ arguments: [String]) async throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [directory + name] + arguments
        let output = Pipe()
        process.standardOutput = output
        // Chromium and Selenium talk a lot on stderr; it goes to a file (a second pipe could
        // fill while this reads the first) and is shown only if the script prints no result.
        let errorPath = TemporaryDirectory.make() + "/" + name + ".stderr"
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        let errorFile = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        process.standardError = errorFile
        try launch(process)
        let data = try await offPool { output.fileHandleForReading.readDataToEndOfFile() }
        process.waitUntilExit()
        try errorFile.close()
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        let diagnostics = String((try? String(contentsOfFile: errorPath, encoding: .utf8))?.suffix(2000) ?? "")
        let json = try #require(
            JSONValue.parse(line),
            "\(name) printed no result (exit \(process.terminationStatus)): \(line)\n\(diagnostics)")
        return Outcome(json: json, line: line)
    }
}
