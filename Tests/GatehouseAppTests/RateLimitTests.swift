import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// Calls that spend a vendor's paid lookup with only the public key (issue 41): rate limited
/// per client address and per app, refused from pages the app does not list, and possible to
/// switch off per provider. Every test here sets its own limits (the harness turns them off).
@Suite("Rate limits")
struct RateLimitTests {
    static let emay = CarrierVendor.named("emay")

    /// A device-mode sign-in with a fresh token (the app's key and a state, no secret).
    private static func deviceSignIn(
        _ bench: CarrierBench, client: String? = nil, origin: String? = nil, on other: Gateway? = nil
    ) async throws -> HTTPClientResponse {
        let token = try await bench.mock.mint(vendor: emay.mock)
        var fields = emay.inputs(token)
        fields["k"] = bench.key
        fields["state"] = "device"
        var headers: [HTTPHeader] = []
        if let client { headers.append(HTTPHeader(name: "X-Forwarded-For", value: client)) }
        if let origin { headers.append(HTTPHeader(name: "Origin", value: origin)) }
        return try await bench.native(emay.provider, fields, headers: headers, on: other)
    }

    /// A fresh client address, so no other test's calls share its bucket.
    private static func someClient() -> String {
        "10.\(UInt8.random(in: 0...255)).\(UInt8.random(in: 0...255)).\(UInt8.random(in: 1...254))"
    }

    @Test("per client address: 429 with Retry-After once the bucket is empty, counted in /metrics", arguments: TestStore.allCases)
    func perAddress(store: TestStore) async throws {
        let bench = try await CarrierBench.start(
            store: try await store.location(),
            extra: ["--rate-limit-address", "3/min", "--rate-limit-app", "off", "--trusted-proxies", "127.0.0.1"])
        let client = Self.someClient()
        var statuses: [Int] = []
        for _ in 0..<5 { statuses.append(try await Self.deviceSignIn(bench, client: client).status) }
        #expect(statuses.prefix(3).allSatisfy { $0 == 200 }, "\(statuses)")
        let refused = try await Self.deviceSignIn(bench, client: client)
        #expect(refused.status == 429)
        #expect(refused.json?["error"] == "rate_limited")
        let wait = try #require(refused.header("retry-after").flatMap(Int.init))
        #expect((1...20).contains(wait), "3/min refills one every 20 s")
        #expect(statuses.suffix(2) == [429, 429])
        // Another client is not held back by this one.
        #expect(try await Self.deviceSignIn(bench, client: Self.someClient()).status == 200)
        let metrics = String(decoding: try await bench.gateway.send("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains(#"gatehouse_rate_limited_total{entry="native",scope="address"} 3"#), "\(metrics.suffix(400))")
        // A backend with the secret is not limited.
        #expect(try await bench.signIn(Self.emay).response.status == 200)
        try await bench.stop()
    }

    @Test("per app: concurrent junk calls reach the vendor at most as often as the bucket holds")
    func perAppBurst() async throws {
        let bench = try await CarrierBench.start(extra: ["--rate-limit-app", "5/min", "--rate-limit-address", "off"])
        let before = try await bench.mock.stats().total
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    var fields = ["token": "junk-" + UUID().uuidString, "k": bench.key]
                    fields["state"] = "s"
                    return try await bench.native(Self.emay.provider, fields).status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 429 }.count == 35, "\(statuses.sorted())")
        #expect(try await bench.mock.stats().total - before == 5)
        try await bench.stop()
    }

    @Test("on Redis the buckets are shared: two instances together admit what one bucket holds")
    func sharedAcrossInstances() async throws {
        let store = try await TestStore.redis.location()
        let limits = ["--rate-limit-app", "4/min", "--rate-limit-address", "off"]
        let bench = try await CarrierBench.start(store: store, extra: limits)
        let second = try await Gateway.start(workspace: bench.gateway.workspace, store: store, extra: limits)
        var statuses: [Int] = []
        for index in 0..<8 {
            statuses.append(try await Self.deviceSignIn(bench, on: index % 2 == 0 ? bench.gateway : second).status)
        }
        #expect(statuses.filter { $0 == 200 }.count == 4, "\(statuses)")
        #expect(statuses.filter { $0 == 429 }.count == 4, "\(statuses)")
        _ = try await second.stop()
        try await bench.stop()
    }

    @Test("X-Forwarded-For counts only from a trusted proxy; a client cannot pick its own bucket")
    func forwardedFor() async throws {
        let bench = try await CarrierBench.start(extra: ["--rate-limit-address", "2/min", "--rate-limit-app", "off"])
        var statuses: [Int] = []
        for _ in 0..<4 { statuses.append(try await Self.deviceSignIn(bench, client: Self.someClient()).status) }
        #expect(statuses == [200, 200, 429, 429], "the peer (127.0.0.1) is the client: each made-up address is ignored")
        try await bench.stop()
    }

    @Test("a native call from a page names it in Origin, which must be on the app's whitelist")
    func origin() async throws {
        let bench = try await CarrierBench.start()
        let foreign = try await Self.deviceSignIn(bench, origin: "https://evil.example")
        #expect(foreign.status == 403)
        #expect(foreign.json?["error"] == "origin_not_allowed")
        #expect(try await Self.deviceSignIn(bench, origin: "http://localhost:8080").status == 200)
        #expect(try await Self.deviceSignIn(bench, origin: "null").status == 403)
        var fields = Self.emay.inputs(try await bench.mock.mint(vendor: Self.emay.mock))
        fields["key"] = bench.key
        fields["secret"] = bench.secret
        let backend = try await bench.native(Self.emay.provider, fields, headers: [HTTPHeader(name: "Origin", value: "https://evil.example")])
        #expect(backend.status == 403, "a backend call carrying a foreign Origin came through a browser")
        try await bench.stop()
    }

    @Test("an app switches the secret-free mode off for a provider: only its backend signs in", arguments: TestStore.allCases)
    func deviceSwitch(store: TestStore) async throws {
        let bench = try await CarrierBench.start(store: try await store.location())
        let parameters = try JSONCoding.encode(JSONValue.object(JSONObject(strings: MockCarrier.credentials[Self.emay.mock] ?? [:])))
        let body = #"{"device_sign_in":false,"parameters":"# + String(decoding: parameters, as: UTF8.self) + "}"
        let stored = try await bench.gateway.send("PUT", "/api/admin/apps/\(bench.key)/keysets/emay", body: body)
        #expect(stored.status == 200)
        #expect(stored.json?["device_sign_in"] == false)
        let before = try await bench.mock.stats().total
        let device = try await Self.deviceSignIn(bench)
        #expect(device.status == 403)
        #expect(device.json?["error"] == "device_sign_in_off")
        #expect(try await bench.mock.stats().total == before, "refused before the vendor is called")
        #expect(try await bench.signIn(Self.emay).response.status == 200)
        let listed = try await bench.gateway.send("GET", "/api/admin/apps/\(bench.key)")
        let keysets = listed.json?["keysets"]?.arrayValue ?? []
        #expect(keysets.first { $0["provider"] == "emay" }?["device_sign_in"] == false)
        try await bench.stop()
    }

    @Test("OAuth 1 starts, which fetch a request token first, share the limits: the page says when to try again")
    func oauth1Starts() async throws {
        let bench = try await LoginBench.start(extra: ["--rate-limit-app", "2/min", "--rate-limit-address", "off"])
        var statuses: [Int] = []
        for index in 0..<3 {
            statuses.append(try await bench.get(bench.startURL("mock1", opts: #"{"state":"o\#(index)"}"#)).status)
        }
        #expect(statuses == [302, 302, 429])
        let refused = try await bench.get(bench.startURL("mock1", opts: #"{"state":"o9"}"#))
        #expect(refused.header("retry-after").flatMap(Int.init) != nil)
        #expect(try LoginBench.message(refused)["message"]?.stringValue?.hasPrefix("Too many sign-ins") == true)
        // OAuth 2 starts call nobody before the user is back: never limited.
        #expect(try await bench.get(bench.startURL("mock2")).status == 302)
        try await bench.stop()
    }
}
