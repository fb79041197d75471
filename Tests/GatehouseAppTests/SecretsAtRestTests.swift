import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// What a login leaves in the store and in the log: no provider token, refresh token, code or
/// secret in plain text, whatever the upstream did (issue 41, item 10).
@Suite("Secrets at rest and in the log", .serialized)
struct SecretsAtRestTests {
    @Test("no token, refresh token or secret in any Redis key or value, nor in the SQLite files",
          arguments: TestStore.allCases)
    func sealedInTheStore(store: TestStore) async throws {
        // A private Redis, so the scan reads this gateway's entries and nobody else's.
        let redis = store == .redis ? try await RedisServer.launch() : nil
        let bench = try await LoginBench.start(store: redis?.url() ?? "sqlite:./data/gatehouse.db")
        let redeemed = try await Secrets.login(bench, state: "redeemed")
        let tokens = try #require(try await bench.redeem(redeemed.code).json)
        let pending = try await Secrets.login(bench, state: "pending")
        let refreshed = try await bench.post("/auth/refresh_token/mockprofile", form: [
            "token": try #require(tokens["refresh_token"]?.stringValue), "key": bench.key, "secret": bench.secret,
        ])
        #expect(refreshed.status == 200)
        _ = try await bench.get(bench.startURL("mockprofile", opts: #"{"state":"started"}"#))
        var plaintexts = ["secret-1", bench.secret, redeemed.accessToken, pending.accessToken]
        plaintexts += [tokens, try #require(refreshed.json)].flatMap { answer in
            ["access_token", "refresh_token"].compactMap { answer[$0]?.stringValue }
        }
        #expect(plaintexts.count == 8)

        func scan() async throws -> [UInt8] {
            if let redis { return try await redis.everyKeyAndValue() }
            return bench.gateway.workspace.allBytes(under: "data")
        }
        // Held one-time records reach the SQLite file once they are half a second old.
        try await Task.sleep(for: .milliseconds(800))
        var scans = [("running", try await scan())]
        try await bench.stop()
        scans.append(("stopped", try await scan()))
        for (when, bytes) in scans {
            // Bools, so that a failure names the secret instead of printing the whole scan.
            func holds(_ text: String) -> Bool { bytes.contains(bytes: Array(text.utf8)) }
            // The app key is public and names the app's entries: the scan can see plain text.
            #expect(holds(bench.key), "\(store), \(when): the scan reads the entries")
            #expect(!holds("unscanned "), "\(store), \(when): every entry's type is read")
            let plain = plaintexts.filter(holds).map { $0.prefix(6) + "…" }
            #expect(plain.isEmpty, "\(store), \(when): in plain text: \(plain)")
        }
        await redis?.stop()
    }

    @Test("the log names no token, refresh token or code after refused refreshes, upstream 5xx and timeouts",
          arguments: TestStore.allCases)
    func nothingInTheLog(store: TestStore) async throws {
        let bench = try await LoginBench.start(
            store: try await store.location(), extra: ["--log-level", "debug", "--upstream-timeout", "1"])
        let first = try await Secrets.login(bench, state: "first")
        let tokens = try #require(try await bench.redeem(first.code).json)
        let firstRefresh = try #require(tokens["refresh_token"]?.stringValue)
        let rotated = try #require(try await refresh(bench, firstRefresh).json)
        let secondRefresh = try #require(rotated["refresh_token"]?.stringValue)
        let secondAccess = try #require(rotated["access_token"]?.stringValue)
        let unredeemed = try await Secrets.login(bench, state: "unredeemed")

        // Refused: a refresh token the provider never issued (a rotated-away one would get the
        // answer shared for 30 s), a replayed code, a code with a wrong secret.
        let unknownRefresh = "mrt_" + String(repeating: "Q", count: 32)
        #expect(try await refresh(bench, unknownRefresh).status == 400)
        #expect(try await bench.redeem(first.code).status == 400)
        let wrongSecret = try await bench.post("/auth/access_token", form: [
            "code": unredeemed.code, "key": bench.key, "secret": String(repeating: "A", count: 27),
        ])
        #expect(wrongSecret.status == 401)

        // The provider fails, echoing what it was sent in its error bodies.
        try await bench.mock.setEndpointFault(.serverError, on: .token)
        #expect(try await refresh(bench, secondRefresh).status == 502)
        let failedLogin = try LoginBench.message(try await bench.login("mockprofile", opts: #"{"state":"failed"}"#))
        #expect(failedLogin["status"] == "error")
        try await bench.mock.setEndpointFault(.none, on: .token)
        let oauthio = [HTTPHeader(name: "oauthio", value: "k=\(bench.key)&access_token=\(secondAccess)")]
        try await bench.mock.setEndpointFault(.serverError, on: .user)
        #expect(try await bench.get(bench.base + "/auth/mockprofile/me", headers: oauthio).status == 502)
        #expect(try await bench.get(bench.base + "/request/mockprofile/%2Fuser", headers: oauthio).status == 500)
        // And then answers later than --upstream-timeout.
        try await bench.mock.setEndpointFault(.slow, on: .user)
        #expect(try await bench.get(bench.base + "/auth/mockprofile/me", headers: oauthio).status == 504)
        #expect(try await bench.get(bench.base + "/request/mockprofile/%2Fuser", headers: oauthio).status == 504)
        try await bench.stop()

        let log = bench.gateway.process.standardError + bench.gateway.process.standardOutput
        // Debug lines of the failed calls are there to be searched.
        #expect(log.contains(#""http.status_code":"504""#) && log.contains(#""http.status_code":"502""#), "\(log.suffix(2000))")
        let plaintexts = [first.providerCode, first.code, first.accessToken, unredeemed.providerCode, unredeemed.code,
                          unredeemed.accessToken, unknownRefresh, firstRefresh, secondRefresh, secondAccess, "secret-1", bench.secret]
        let logged = plaintexts.filter { log.contains($0) }.map { $0.prefix(6) + "…" }
        #expect(logged.isEmpty, "\(store): in the log: \(logged)")
    }

    private func refresh(_ bench: LoginBench, _ token: String) async throws -> HTTPClientResponse {
        try await bench.post("/auth/refresh_token/mockprofile", form: ["token": token, "key": bench.key, "secret": bench.secret])
    }
}

/// One server-side login's secrets: the provider's authorization code, the gateway's one-time
/// code and the access token the popup was given.
private struct Secrets {
    let providerCode: String
    let code: String
    let accessToken: String

    static func login(_ bench: LoginBench, state: String) async throws -> Secrets {
        let start = try await bench.get(bench.startURL("mockprofile", opts: #"{"state":"\#(state)"}"#))
        let callback = try #require(try await bench.get(start.header("location") ?? "").header("location"))
        let providerCode = try #require(URLComponents(string: callback)?.queryItems?.first { $0.name == "code" }?.value)
        let message = try LoginBench.message(try await bench.get(callback))
        return Secrets(
            providerCode: providerCode, code: try #require(message["data"]?["code"]?.stringValue),
            accessToken: try #require(message["data"]?["access_token"]?.stringValue))
    }
}
