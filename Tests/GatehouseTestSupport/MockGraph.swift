import Foundation

/// A local stand-in for Facebook Login and the Graph API: `Tests/Fixtures/mock_graph.py` run
/// as a python3 child process on 127.0.0.1. It checks `appsecret_proof` on every call that
/// carries one (and requires it with `requireProof`), and counts, then refuses, any request
/// carrying an `oauthio` header or a Cookie. Start one per test so state never mixes.
public final class MockGraph: FixtureServer, @unchecked Sendable {
    public static let appID = "1234567890"
    public static let appSecret = "fb-app-secret-0123456789"
    public static let userID = "10158253215623784"
    /// `expires_in` of a token from the long-lived exchange.
    public static let longLivedSeconds = 5_183_944

    public static func start(requireProof: Bool = false) async throws -> MockGraph {
        try await offPool {
            MockGraph(child: try MockProcess(
                scriptName: "mock_graph.py", arguments: requireProof ? ["--require-proof"] : [], name: "mock Graph API"))
        }
    }

    /// `GET /_stats`: counters ("dialog", "code_exchange", "fb_exchange_token", "me", "revoke",
    /// "echo", "slow", "proof_checked", "proof_rejected", "forbidden_headers").
    public func stats() async throws -> [String: Int] {
        try await child.controlJSON("GET /_stats").compactMapValues(MockProcess.integer)
    }

    /// The Graph API versions requested so far (`v19.0`, …).
    public func versions() async throws -> [String] {
        (try await child.controlJSON("GET /_stats")["versions"] as? [String]) ?? []
    }

    public func requireProof(_ on: Bool) async throws {
        _ = try await child.control("GET /_config?require_proof=\(on ? 1 : 0)")
    }
}
