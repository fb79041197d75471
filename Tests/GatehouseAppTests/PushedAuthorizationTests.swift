import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// RFC 9126 pushed authorization requests: the authorize parameters go to the provider first,
/// with the app's client authentication, and the browser carries only a reference to them.
@Suite("Pushed authorization requests", .serialized)
struct PushedAuthorizationTests {
    @Test("the browser is sent with only client_id and request_uri; the pushed state and PKCE challenge complete the login")
    func pushed() async throws {
        let bench = try await LoginBench.start()
        let start = try await bench.get(bench.startURL("mockpar", opts: #"{"state":"p","state_type":"client"}"#))
        let location = try #require(start.header("location"), "\(String(decoding: start.body, as: UTF8.self))")
        let query = try #require(location.split(separator: "?", maxSplits: 1).last.map(String.init))
        let names = (FormField.parse(query) ?? []).map(\.name)
        #expect(location.hasPrefix(bench.mock.baseURL + "/oauth2/authorize?") && names == ["client_id", "request_uri"], "\(location)")
        #expect(try await bench.mock.stats()["par"] == 1)

        let message = try await bench.clientLogin("mockpar", state: "q")
        #expect(message["status"] == "success" && message["data"]?["access_token"] != nil, "\(message)")

        // A provider that refuses the push (the keyset's secret is wrong): the login fails at start.
        let body = #"{"parameters":{"client_id":"client-1","client_secret":"wrong"},"response_type":"both"}"#
        _ = try await bench.gateway.send("PUT", "/api/admin/apps/\(bench.key)/keysets/mockpar", body: body)
        let refused = try LoginBench.message(try await bench.get(bench.startURL("mockpar", opts: #"{"state":"r","state_type":"client"}"#)))
        #expect(refused["status"] == "error", "\(refused)")
        #expect(refused["message"] == "Error during the 'par' step (Client authentication failed)", "\(refused)")
        #expect(refused["data"]?["error"] == "invalid_client")
        try await bench.stop()
    }
}
