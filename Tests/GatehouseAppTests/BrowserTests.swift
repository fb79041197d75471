import Foundation
import GatehouseCore
import GatehouseTestSupport
import Testing

/// The popup flow in a real browser: headless Chromium driven by Selenium (Debian's
/// chromium, chromium-driver and python3-selenium, installed by scripts/install-deps).
@Suite("Browser")
struct BrowserTests {
    static let script = String(#filePath.dropLast("GatehouseAppTests/BrowserTests.swift".count)) + "Browser/popup_flow.py"

    @Test("a popup login in headless Chromium posts the result only to the opener's origin")
    func popupInChromium() async throws {
        let bench = try await LoginBench.start()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        // `--key=…` in one piece: a random app key may start with "-", which argparse would
        // otherwise take for an option (it did, one run in about 64).
        process.arguments = [Self.script, "--gateway=\(bench.base)", "--key=\(bench.key)", "--provider=mock2"]
        let output = Pipe()
        process.standardOutput = output
        // Chromium and Selenium talk a lot on stderr; it goes to a file (a second pipe could
        // fill while this reads the first) and is shown only if the script fails.
        let errorPath = TemporaryDirectory.make() + "/popup_flow.stderr"
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        let errorFile = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        process.standardError = errorFile
        try launch(process)
        let data = try await offPool { output.fileHandleForReading.readDataToEndOfFile() }
        process.waitUntilExit()
        try errorFile.close()
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        let diagnostics = { String((try? String(contentsOfFile: errorPath, encoding: .utf8))?.suffix(2000) ?? "") }
        let outcome = try #require(
            JSONValue.parse(line), "popup_flow.py printed no result (exit \(process.terminationStatus)): \(line)\n\(diagnostics())")
        #expect(outcome["ok"] == true, "\(line)")
        #expect(outcome["has_token"] == true)
        #expect(outcome["has_code"] == false)
        #expect(outcome["provider"] == "mock2")
        #expect(outcome["request_url"] == .string(bench.mock.baseURL + "/oauth2"))
        try await bench.stop()
    }
}
