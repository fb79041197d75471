import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a stop and a crash cost (issue 41, item 10): a stop answers what it has begun; a crash
/// on SQLite loses no acknowledged app or keyset, and lets a redeemed code be redeemed again
/// only if it was redeemed in the last milliseconds (the window `docs/deployment.md` states).
@Suite("Stops and crashes", .serialized)
struct CrashSafetyTests {
    @Test("SIGTERM with a slow upstream call in flight: the call is answered, then the process exits 0")
    func stopAnswersInFlight() async throws {
        let bench = try await LoginBench.start(store: "sqlite:./data/gatehouse.db", extra: ["--upstream-timeout", "10"])
        let message = try await bench.clientLogin("mockprofile")
        let token = try #require(message["data"]?["access_token"]?.stringValue)
        try await bench.mock.setEndpointFault(.slow, on: .user)
        let oauthio = [HTTPHeader(name: "oauthio", value: "k=\(bench.key)&access_token=\(token)")]
        let inFlight = Task { try await bench.get(bench.base + "/request/mockprofile/%2Fuser", headers: oauthio) }
        // Well inside the mock's 3 s sleep: the gateway is waiting on the provider.
        try await Task.sleep(for: .milliseconds(800))
        let signalled = ContinuousClock.now
        let exit = Task { try await bench.gateway.process.stop(signal: SIGTERM, timeout: .seconds(20)) }
        let answer = try await inFlight.value
        #expect(answer.status == 200)
        #expect(answer.json?["login"] == "octo", "\(String(decoding: answer.body.prefix(300), as: UTF8.self))")
        #expect(try await exit.value == 0)
        #expect(ContinuousClock.now - signalled < .seconds(10), "the drain ends with its last request")
        // Nothing new is taken on once the stop has begun.
        #expect((try? await bench.get(bench.base + "/healthz")) == nil)
        bench.mock.stop()
    }

    @Test("SIGKILL on SQLite while codes are redeemed and apps written: nothing acknowledged is lost or undone")
    func killWhileRedeeming() async throws {
        let bench = try await LoginBench.start(store: "sqlite:./data/gatehouse.db")
        var codes: [String] = []
        for batch in 0..<40 {
            codes += try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<10 {
                    group.addTask { try await Self.code(bench, state: "s\(batch)-\(index)") }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        // Every code is now past the half second after which it is on disk.
        try await Task.sleep(for: .milliseconds(900))
        let kept = Array(codes.suffix(20))
        let spendable = Array(codes.dropLast(20))

        let log = Ledger()
        let workers = 4
        let running = Task {
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<workers {
                    group.addTask {
                        for code in stride(from: worker, to: spendable.count, by: workers).map({ spendable[$0] }) {
                            guard let answer = try? await bench.redeem(code), answer.status == 200 else { return }
                            let now = ContinuousClock.now
                            log.state.withLock { $0.redeemed.append((code, now)) }
                            // Paced, so that the kill finds codes redeemed well before it.
                            try? await Task.sleep(for: .milliseconds(5))
                        }
                    }
                }
                group.addTask {
                    for index in 0..<10_000 {
                        let name = "crash-\(index)"
                        guard let created = try? await bench.gateway.send("POST", "/api/admin/apps", body: #"{"name":"\#(name)"}"#),
                              created.status == 201, let key = created.json?["key"]?.stringValue else { return }
                        log.state.withLock { $0.apps.append(key) }
                        let keyset = #"{"parameters":{"client_id":"id-\#(index)","client_secret":"s-\#(index)"}}"#
                        guard let put = try? await bench.gateway.send("PUT", "/api/admin/apps/\(key)/keysets/mock2", body: keyset),
                              put.status == 200 else { return }
                        log.state.withLock { $0.keysets.append((key, "id-\(index)")) }
                    }
                }
            }
        }
        // Mid-stream: codes redeemed for 300 ms (more than half of them), some apps written.
        while log.state.withLock({ state in
            guard let first = state.redeemed.first?.at, state.keysets.count >= 5 else { return true }
            return ContinuousClock.now - first < .milliseconds(300)
        }) {
            try await Task.sleep(for: .milliseconds(1))
        }
        let killed = ContinuousClock.now
        try await bench.gateway.process.stop(signal: SIGKILL)
        await running.value
        bench.gateway.client.shutdown()
        let acknowledged = log.state.withLock { $0 }
        #expect(acknowledged.redeemed.count < spendable.count, "the kill landed while codes were being redeemed")

        let gateway = try await Gateway.start(workspace: bench.gateway.workspace, store: "sqlite:./data/gatehouse.db")
        let restarted = LoginBench(gateway: gateway, mock: bench.mock, key: bench.key, secret: bench.secret)
        var lost: [String] = []
        for key in acknowledged.apps where try await gateway.send("GET", "/api/admin/apps/\(key)").status != 200 {
            lost.append("app " + key)
        }
        for (key, clientID) in acknowledged.keysets {
            let keysets = try await gateway.send("GET", "/api/admin/apps/\(key)").json?["keysets"]?.arrayValue ?? []
            if !keysets.contains(where: { $0["parameters"]?["client_id"]?.stringValue == clientID }) { lost.append("keyset " + key) }
        }
        #expect(lost.isEmpty, "acknowledged, then lost: \(lost)")
        // Codes nobody redeemed, older than the half second, outlive the crash.
        for code in kept {
            #expect(try await restarted.redeem(code).status == 200)
        }
        var againAge: [Duration] = []
        for (code, at) in acknowledged.redeemed {
            if try await restarted.redeem(code).status == 200 { againAge.append(killed - at) }
        }
        let oldest = againAge.max() ?? .zero
        // docs/deployment.md: the removals of the last few milliseconds (measured: 0 to 2.4 ms on
        // a 2-core machine, under this load); a tenth of a second is the bound asserted. Had the
        // removal never been written, codes redeemed 300 ms before the kill would show here.
        #expect(oldest < .milliseconds(100), "a code redeemed \(oldest) before the crash is redeemable again")
        print("crash window: \(againAge.count) of \(acknowledged.redeemed.count) redeemed codes redeemable again, "
            + "the oldest redeemed \(oldest) before the kill")
        try await restarted.stop()
    }

    /// A server-side login's one-time code, not yet redeemed.
    private static func code(_ bench: LoginBench, state: String) async throws -> String {
        let message = try LoginBench.message(try await bench.login("mock2", opts: #"{"state":"\#(state)"}"#))
        return try #require(message["data"]?["code"]?.stringValue)
    }
}

/// What the gateway acknowledged before it was killed, and when, noted by concurrent clients.
private final class Ledger: Sendable {
    let state = Mutex(Acknowledged())
}

private struct Acknowledged: Sendable {
    var redeemed: [(code: String, at: ContinuousClock.Instant)] = []
    var apps: [String] = []
    var keysets: [(app: String, clientID: String)] = []
}
