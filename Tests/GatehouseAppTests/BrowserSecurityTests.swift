import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// Issue 41 in headless Chromium: what a browser carries between apps through the gateway's
/// own origin, and the errors the OAuth.io SDK must be told about (Tests/Browser/
/// security_chain.py and sdk_errors.py). Each case saves screenshots of its final windows to
/// `BrowserScript.screenshots` and prints their paths. Serialized: one Chromium at a time.
@Suite("Browser security", .serialized)
struct BrowserSecurityTests {
    /// An app on the bench's gateway whitelisting only `origin`, with a mock2 keyset.
    static func app(_ bench: LoginBench, name: String, whitelisting origin: String) async throws -> String {
        let app = #"{"name":"\#(name)","domains":["\#(origin)"]}"#
        let created = try await bench.gateway.send("POST", "/api/admin/apps", body: app)
        guard let key = created.json?["key"]?.stringValue else {
            throw RawHTTPError("app creation failed: \(created.status)")
        }
        let keyset = #"{"parameters":{"client_id":"client-1","client_secret":"secret-1","scope":["user"]},"#
            + #""response_type":"both"}"#
        let put = try await bench.gateway.send("PUT", "/api/admin/apps/\(key)/keysets/mock2", body: keyset)
        guard (200..<300).contains(put.status) else { throw RawHTTPError("keyset not stored: \(put.status)") }
        return key
    }

    /// Prints the script's outcome and where its screenshots are, for a look after the run.
    static func report(_ outcome: BrowserScript.Outcome) {
        print("browser outcome: \(outcome.line)")
        for path in outcome.json["screenshots"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
            print("screenshot: \(path)")
        }
    }

    @Test("A's tokens never reach B's redirect_uri through a gateway redirect_uri, nor does a fragment survive B's 302",
          arguments: ["chain", "inherited"])
    func crossAppChain(_ name: String) async throws {
        let bench = try await LoginBench.start()
        let page = freePort(), attacker = freePort()
        let keyA = try await Self.app(bench, name: "app-a", whitelisting: "http://localhost:\(page)")
        let keyB = try await Self.app(bench, name: "app-b", whitelisting: "http://localhost:\(attacker)")
        let result = try await BrowserScript.run("security_chain.py", [
            "--case=\(name)", "--gateway=\(bench.base)", "--key-a=\(keyA)", "--key-b=\(keyB)", "--page-port=\(page)",
            "--attacker-port=\(attacker)", "--screenshots=\(BrowserScript.screenshots)",
        ])
        Self.report(result)
        let outcome = result.json
        if name == "chain" {
            #expect(outcome["a_token_reached_attacker"] == false, "A's token landed on the attacker: \(result.line)")
            #expect(outcome["oauthio_in_attacker_hash"] == 0, "\(result.line)")
            #expect(outcome["a_login_refused_with_error_page"] == true, "A's login was not refused: \(result.line)")
        } else {
            #expect(outcome["mark_inherited"] == false, "the landing page inherited the fragment: \(result.line)")
            #expect(outcome["landed_with_own_result"] == true, "\(result.line)")
        }
        #expect(outcome["ok"] == true, "\(result.line)")
        try await bench.stop()
    }

    @Test("the SDK is told, by a posted error message or a plain error page, why a login cannot start",
          arguments: ["unknown-key", "unlisted-origin", "unlisted-redirect"])
    func sdkErrors(_ name: String) async throws {
        let bench = try await LoginBench.start()
        let page = freePort(), stranger = freePort(), attacker = freePort()
        let key = try await Self.app(bench, name: "app-a", whitelisting: "http://localhost:\(page)")
        let result = try await BrowserScript.run("sdk_errors.py", [
            "--case=\(name)", "--gateway=\(bench.base)", "--key=\(key)", "--page-port=\(page)",
            "--stranger-port=\(stranger)", "--attacker-port=\(attacker)", "--screenshots=\(BrowserScript.screenshots)",
        ])
        Self.report(result)
        let outcome = result.json
        if name == "unlisted-redirect" {
            #expect(outcome["attacker_hits"] == [], "the browser reached the unlisted redirect_uri: \(result.line)")
            #expect(outcome["error_page"] == true, "no readable 400 page: \(result.line)")
        } else {
            #expect(outcome["message_received"] == true, "no message reached the page: \(result.line)")
            #expect(outcome["message"]?["status"] == "error", "\(result.line)")
        }
        #expect(outcome["ok"] == true, "\(result.line)")
        try await bench.stop()
    }
}
