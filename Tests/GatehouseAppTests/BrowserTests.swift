import Foundation
import GatehouseCore
import GatehouseTestSupport
import Testing

/// The popup flow in a real browser: headless Chromium driven by Selenium (Debian's
/// chromium, chromium-driver and python3-selenium, installed by scripts/install-deps).
@Suite("Browser")
struct BrowserTests {
    @Test("a popup login in headless Chromium posts the result only to the opener's origin")
    func popupInChromium() async throws {
        let bench = try await LoginBench.start()
        let result = try await BrowserScript.run(
            "popup_flow.py", ["--gateway=\(bench.base)", "--key=\(bench.key)", "--provider=mock2"])
        let outcome = result.json
        #expect(outcome["ok"] == true, "\(result.line)")
        #expect(outcome["has_token"] == true)
        #expect(outcome["has_code"] == false)
        #expect(outcome["provider"] == "mock2")
        #expect(outcome["request_url"] == .string(bench.mock.baseURL + "/oauth2"))
        try await bench.stop()
    }
}
