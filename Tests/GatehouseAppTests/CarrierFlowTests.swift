import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// One shipped carrier provider, pointed at the mock: its folder, the mock's path prefix, the
/// keyset the mock accepts, the inputs a device sends besides `token`, the keyset parameter
/// that signs (or opens) the request, and the error class a wrong one produces.
struct CarrierVendor: Sendable, CustomStringConvertible {
    let provider: String
    let mock: String
    let signingSecret: String
    let badSignatureClass: String
    let usedTokenClass: String

    var description: String { provider }

    func inputs(_ token: MockCarrier.DeviceToken) -> [String: String] {
        var fields = ["token": token.token]
        switch mock {
        case "geetest": fields["process_id"] = token.processID
        case "mobtech":
            fields["op_token"] = token.opToken
            fields["operator"] = "CMCC"
        case "yidun": fields["access_token"] = token.accessToken
        default: break
        }
        return fields
    }

    static let all = [
        CarrierVendor(provider: "emay", mock: "emay", signingSecret: "secretKey", badSignatureClass: "bad_signature", usedTokenClass: "token_used"),
        CarrierVendor(
            provider: "geetest-onelogin", mock: "geetest", signingSecret: "appKey", badSignatureClass: "bad_signature", usedTokenClass: "token_used"),
        CarrierVendor(
            provider: "aliyun-dypns", mock: "aliyun", signingSecret: "accessKeySecret", badSignatureClass: "bad_signature",
            usedTokenClass: "token_expired"),
        CarrierVendor(provider: "shanyan", mock: "shanyan", signingSecret: "appKey", badSignatureClass: "upstream", usedTokenClass: "upstream"),
        CarrierVendor(
            provider: "jverification", mock: "jverification", signingSecret: "masterSecret", badSignatureClass: "auth_failed",
            usedTokenClass: "token_expired"),
        CarrierVendor(
            provider: "mobtech", mock: "mobtech", signingSecret: "appSecret", badSignatureClass: "bad_signature", usedTokenClass: "token_expired"),
        CarrierVendor(provider: "cmcc", mock: "cmcc", signingSecret: "appKey", badSignatureClass: "upstream", usedTokenClass: "upstream"),
        CarrierVendor(provider: "tencent-rapidauth", mock: "tencent", signingSecret: "appKey", badSignatureClass: "upstream", usedTokenClass: "upstream"),
        CarrierVendor(provider: "netease-yidun", mock: "yidun", signingSecret: "secretKey", badSignatureClass: "upstream", usedTokenClass: "carrier_failed"),
    ]

    static func named(_ provider: String) -> CarrierVendor { all.first { $0.provider == provider } ?? all[0] }
}

/// A gateway serving the shipped carrier definitions (only their `url` and timeout changed, to
/// reach the mock), one app, and a keyset per vendor.
struct CarrierBench {
    let gateway: Gateway
    let mock: MockCarrier
    let key: String
    let secret: String

    /// The shipped `providers/<id>/provider.json` with its base URL moved to the mock.
    static func definition(_ vendor: CarrierVendor, base: String, timeoutMs: Int) throws -> String {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("providers/\(vendor.provider)/provider.json").path
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard var document = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            var native = document["native"] as? [String: Any], var request = native["request"] as? [String: Any]
        else { throw RawHTTPError("unreadable \(path)") }
        document["url"] = base + "/" + vendor.mock
        document["$schema"] = nil
        request["timeoutMs"] = timeoutMs
        native["request"] = request
        document["native"] = native
        return String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self)
    }

    static func start(
        timeoutMs: Int = 2000, keysets: [String: [String: String]] = [:], store: String = "memory:", extra: [String] = []
    ) async throws -> CarrierBench {
        let mock = try await MockCarrier.start()
        var providers: [String: String] = [:]
        for vendor in CarrierVendor.all {
            providers[vendor.provider] = try definition(vendor, base: mock.baseURL, timeoutMs: timeoutMs)
        }
        let gateway = try await Gateway.start(workspace: try Workspace(providers: providers), store: store, extra: extra)
        let created = try await gateway.send("POST", "/api/admin/apps", body: #"{"name":"phone-app","domains":["localhost"]}"#)
        guard let key = created.json?["key"]?.stringValue, let secret = created.json?["secret"]?.stringValue else {
            throw RawHTTPError("app creation failed")
        }
        let bench = CarrierBench(gateway: gateway, mock: mock, key: key, secret: secret)
        for vendor in CarrierVendor.all {
            try await bench.setKeyset(vendor, keysets[vendor.provider] ?? MockCarrier.credentials[vendor.mock] ?? [:])
        }
        return bench
    }

    func setKeyset(_ vendor: CarrierVendor, _ parameters: [String: String]) async throws {
        let fields = JSONObject(strings: parameters)
        let body = String(decoding: try JSONCoding.encode(JSONValue.object(["parameters": .object(fields)])), as: UTF8.self)
        let stored = try await gateway.send("PUT", "/api/admin/apps/\(key)/keysets/\(vendor.provider)", body: body)
        guard stored.status == 200 else { throw RawHTTPError("keyset: \(stored.status) \(String(decoding: stored.body, as: UTF8.self))") }
    }

    func native(_ provider: String, _ fields: [String: String], headers: [HTTPHeader] = [], on other: Gateway? = nil)
        async throws -> HTTPClientResponse
    {
        let body = String(decoding: try JSONCoding.encode(fields), as: UTF8.self)
        let target = other ?? gateway
        return try await target.client.execute(HTTPClientRequest(
            method: "POST", url: "http://127.0.0.1:\(target.port)/auth/\(provider)/native",
            headers: [HTTPHeader(name: "Content-Type", value: "application/json")] + headers, body: Array(body.utf8)))
    }

    /// A backend-mode sign-in with a fresh token minted as `behaviour`.
    func signIn(_ vendor: CarrierVendor, phone: String = "13800138000", behaviour: MockCarrier.Behaviour = .ok, delay: Double = 0)
        async throws -> (response: HTTPClientResponse, token: MockCarrier.DeviceToken)
    {
        let token = try await mock.mint(vendor: vendor.mock, phone: phone, behaviour: behaviour, delay: delay)
        var fields = vendor.inputs(token)
        fields["key"] = key
        fields["secret"] = secret
        return (try await native(vendor.provider, fields), token)
    }

    func stop() async throws {
        _ = try await gateway.stop()
        mock.stop()
    }
}

@Suite("Carrier one-click login", .serialized)
struct CarrierFlowTests {
    @Test("Emay, backend mode: the envelope round-trips, a Gatehouse token and a per-app id come back")
    func emayBackend() async throws {
        let bench = try await CarrierBench.start()
        let vendor = CarrierVendor.named("emay")
        let (answer, token) = try await bench.signIn(vendor, phone: "13912345678")
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        let json = try #require(answer.json)
        #expect(json["provider"] == "emay")
        #expect(json["expires_in"] == 3600)
        let accessToken = try #require(json["access_token"]?.stringValue)
        #expect(accessToken.count >= 20)
        #expect(json["user"]?["phone"] == "13912345678")
        #expect(json["user"]?["raw"]?["mobile"] == "13912345678")
        let id = try #require(json["user"]?["id"]?.stringValue)
        #expect(!id.contains("13912345678") && id.count >= 40)

        // The same number signs in again with a new token: same id, new access token.
        let (again, _) = try await bench.signIn(vendor, phone: "13912345678")
        #expect(again.json?["user"]?["id"]?.stringValue == id)
        #expect(again.json?["access_token"]?.stringValue != accessToken)
        // Another number gets another id.
        let (other, _) = try await bench.signIn(vendor, phone: "13700000000")
        #expect(other.json?["user"]?["id"]?.stringValue != id)

        // `me` answers with the Gatehouse token, for this app only, without calling the vendor.
        func me(_ oauthio: String) async throws -> HTTPClientResponse {
            try await bench.gateway.client.execute(HTTPClientRequest(
                url: "http://127.0.0.1:\(bench.gateway.port)/auth/emay/me", headers: [HTTPHeader(name: "oauthio", value: oauthio)]))
        }
        let profile = try await me("k=\(bench.key)&access_token=\(accessToken)")
        #expect(profile.status == 200)
        #expect(profile.json?["data"]?["id"]?.stringValue == id && profile.json?["data"]?["phone"] == "13912345678")
        #expect(profile.json?["data"]?["raw"]?["mobile"] == "13912345678")
        #expect(try await me("k=\(bench.key)&access_token=not-a-token").status == 401)

        let stats = try await bench.mock.stats()
        #expect(stats.requests[token.token] == 1)
        #expect(stats.total == 3)
        try await bench.stop()
        // Phone numbers never reach a log line unmasked.
        let logs = bench.gateway.process.standardOutput + bench.gateway.process.standardError
        #expect(!logs.contains("13912345678") && !logs.contains("13700000000"))
        #expect(logs.contains("139****5678"))
    }

    @Test("Emay, app mode: a one-time code, redeemed once by the backend")
    func emayAppMode() async throws {
        let bench = try await CarrierBench.start()
        let token = try await bench.mock.mint(vendor: "emay", phone: "15000000001")
        let answer = try await bench.native("emay", ["k": bench.key, "state": "device-state", "token": token.token, "operator_type": "CM"])
        #expect(answer.status == 200)
        #expect(answer.json?["status"] == "success" && answer.json?["state"] == "device-state" && answer.json?["provider"] == "emay")
        let code = try #require(answer.json?["data"]?["code"]?.stringValue)
        #expect(!String(decoding: answer.body, as: UTF8.self).contains("15000000001"))
        func redeem() async throws -> HTTPClientResponse {
            let form = "code=\(code)&key=\(bench.key)&secret=\(bench.secret)"
            return try await bench.gateway.client.execute(HTTPClientRequest(
                method: "POST", url: "http://127.0.0.1:\(bench.gateway.port)/auth/access_token",
                headers: [HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded")], body: Array(form.utf8)))
        }
        let redeemed = try await redeem()
        #expect(redeemed.status == 200)
        #expect(redeemed.json?["user"]?["phone"] == "15000000001")
        #expect(redeemed.json?["access_token"]?.stringValue != nil)
        #expect(redeemed.json?["state"] == "device-state" && redeemed.json?["provider"] == "emay")
        #expect(try await redeem().status == 400)
        try await bench.stop()
    }

    @Test("Emay failures: each its own error, and the vendor sees each token exactly as often as it was sent")
    func emayFailures() async throws {
        let bench = try await CarrierBench.start(timeoutMs: 700)
        let vendor = CarrierVendor.named("emay")
        var sent: [String: Int] = [:]
        func expect(_ behaviour: MockCarrier.Behaviour, status: Int, error: String, delay: Double = 0) async throws {
            let (answer, token) = try await bench.signIn(vendor, behaviour: behaviour, delay: delay)
            sent[token.token, default: 0] += 1
            #expect(answer.status == status, "\(behaviour): \(String(decoding: answer.body, as: UTF8.self))")
            #expect(answer.json?["error"]?.stringValue == error, "\(behaviour)")
            #expect(answer.json?["error_description"]?.stringValue?.isEmpty == false)
        }
        try await expect(.expired, status: 401, error: "token_expired")
        try await expect(.garbage, status: 502, error: "upstream")
        try await expect(.wrongKey, status: 502, error: "decrypt_failed")
        try await expect(.slow, status: 504, error: "transport", delay: 2.0)

        // A used token: the first exchange succeeds, the second is refused as used.
        let token = try await bench.mock.mint(vendor: "emay")
        let fields = ["key": bench.key, "secret": bench.secret, "token": token.token]
        #expect(try await bench.native("emay", fields).status == 200)
        let reused = try await bench.native("emay", fields)
        sent[token.token] = 2
        #expect(reused.status == 401 && reused.json?["error"] == "token_used")

        // A wrong secret key: Emay cannot open the envelope.
        try await bench.setKeyset(vendor, ["appId": "EMAY-TEST-APP-01", "secretKey": "0000000000000000"])
        let fresh = try await bench.mock.mint(vendor: "emay")
        let refused = try await bench.native("emay", ["key": bench.key, "secret": bench.secret, "token": fresh.token])
        #expect(refused.status == 502 && refused.json?["error"] == "bad_signature")

        // Caller mistakes never reach the vendor.
        let missing = try await bench.native("emay", ["key": bench.key, "secret": bench.secret])
        #expect(missing.status == 400 && missing.json?["error"] == "invalid_input")
        let badSecret = try await bench.native("emay", ["key": bench.key, "secret": "wrong", "token": "x"])
        #expect(badSecret.status == 401)
        try await bench.setKeyset(vendor, ["appId": "EMAY-TEST-APP-01"])
        let incomplete = try await bench.native("emay", ["key": bench.key, "secret": bench.secret, "token": "y"])
        #expect(incomplete.status == 400 && incomplete.json?["error"] == "misconfigured")

        // Give the slow answer time to land, then count: never a retry.
        try await Task.sleep(for: .milliseconds(1500))
        let stats = try await bench.mock.stats()
        for (token, count) in sent { #expect(stats.requests[token] == count, "\(token)") }
        #expect(stats.requests["x"] == nil && stats.requests["y"] == nil)
        #expect(stats.rejected["secretkey"] == 1)
        try await bench.stop()
    }

    @Test("Geetest OneLogin: signed check_phone, AES-256-CBC phone; failures each distinct")
    func geetest() async throws {
        let bench = try await CarrierBench.start(timeoutMs: 700)
        let vendor = CarrierVendor.named("geetest-onelogin")
        let (answer, token) = try await bench.signIn(vendor, phone: "15727067221")
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        #expect(answer.json?["user"]?["phone"] == "15727067221")
        #expect(answer.json?["user"]?["raw"]?["charge"] == true)
        for (behaviour, status, error) in [
            (MockCarrier.Behaviour.expired, 401, "token_expired"), (.garbage, 502, "upstream"), (.wrongKey, 502, "decrypt_failed"),
            (.slow, 504, "transport"),
        ] {
            let (failed, _) = try await bench.signIn(vendor, behaviour: behaviour, delay: 1.5)
            #expect(failed.status == status && failed.json?["error"]?.stringValue == error, "\(behaviour)")
        }
        let missingProcess = try await bench.native(vendor.provider, ["key": bench.key, "secret": bench.secret, "token": "t"])
        #expect(missingProcess.status == 400)
        try await Task.sleep(for: .milliseconds(1000))
        let stats = try await bench.mock.stats()
        #expect(stats.requests[token.token] == 1)
        #expect(stats.requests.values.allSatisfy { $0 == 1 })
        try await bench.stop()
    }

    @Test("every vendor: mock-checked signature, decrypted phone, bad signature and reuse mapped", arguments: CarrierVendor.all)
    func vendor(_ vendor: CarrierVendor) async throws {
        let bench = try await CarrierBench.start()
        let (answer, token) = try await bench.signIn(vendor, phone: "18612345678")
        #expect(answer.status == 200, "\(vendor): \(String(decoding: answer.body, as: UTF8.self)) \(bench.mock.standardError)")
        #expect(answer.json?["user"]?["phone"] == "18612345678")
        #expect(answer.json?["user"]?["id"]?.stringValue?.isEmpty == false)

        var fields = vendor.inputs(token)
        fields["key"] = bench.key
        fields["secret"] = bench.secret
        let reused = try await bench.native(vendor.provider, fields)
        #expect(reused.json?["error"]?.stringValue == vendor.usedTokenClass, "\(vendor): \(String(decoding: reused.body, as: UTF8.self))")

        var wrong = MockCarrier.credentials[vendor.mock] ?? [:]
        wrong[vendor.signingSecret] = String((wrong[vendor.signingSecret] ?? "").reversed())
        try await bench.setKeyset(vendor, wrong)
        let (refused, other) = try await bench.signIn(vendor)
        #expect(refused.json?["error"]?.stringValue == vendor.badSignatureClass, "\(vendor): \(String(decoding: refused.body, as: UTF8.self))")
        let stats = try await bench.mock.stats()
        #expect(stats.requests[token.token] == 2)
        #expect((stats.requests[other.token] ?? 0) <= 1)
        #expect(stats.rejected["bad_signature", default: 0] + stats.rejected["secretkey", default: 0] == 1)
        try await bench.stop()
    }

    @Test("hostile inputs to every vendor get 4xx JSON or the vendor's own failure, and no keyset secret is echoed or logged")
    func hostileInputs() async throws {
        let bench = try await CarrierBench.start()
        let values: [JSONValue] = [
            "", "%00", "\u{0}", "</script><script>alert(1)</script>", "é😀", .string(String(repeating: "A", count: 5000)),
            "{", "null", 0, -1, .number(1e308), true, [], [:], ["a"], ["a": ["b": 1]], .null,
        ]
        var generator = SeededGenerator(seed: 0xCA_221E5)
        let names = ["token", "process_id", "op_token", "operator", "access_token", "k", "state", "code", "phone"]
        var answers: [(String, HTTPClientResponse)] = []
        for vendor in CarrierVendor.all {
            let minted = try await bench.mock.mint(vendor: vendor.mock, phone: "13800138000", behaviour: .ok, delay: 0)
            for _ in 0..<12 {
                var object = JSONObject(strings: vendor.inputs(minted))
                object["key"] = .string(bench.key)
                object["secret"] = .string(bench.secret)
                for name in names where Int.random(in: 0..<3, using: &generator) == 0 {
                    object[name] = values.randomElement(using: &generator)
                }
                if Int.random(in: 0..<6, using: &generator) == 0 { object["secret"] = nil }
                let body = JSONValue.object(object).serialized()
                let answer = try await bench.gateway.client.execute(HTTPClientRequest(
                    method: "POST", url: "http://127.0.0.1:\(bench.gateway.port)/auth/\(vendor.provider)/native",
                    headers: [HTTPHeader(name: "Content-Type", value: "application/json")], body: body))
                answers.append(("\(vendor): \(String(decoding: body, as: UTF8.self).prefix(300))", answer))
            }
        }
        let secrets = MockCarrier.credentials.values.flatMap { $0.values }.filter { $0.count >= 8 } + [bench.secret]
        for (description, answer) in answers {
            // 502 and 504: the vendor refused or failed. A vendor whose error codes are not
            // documented (carrier.md §13) maps every refusal to `upstream` (502), a bad token too.
            #expect(answer.status < 500 || [502, 504].contains(answer.status), "\(answer.status) for \(description)")
            if answer.status >= 400 { #expect(answer.json?["error"]?.stringValue?.isEmpty == false, "\(description)") }
            let text = String(decoding: answer.body, as: UTF8.self)
            #expect(!secrets.contains { text.contains($0) }, "a secret in the answer to \(description)")
        }
        #expect(answers.contains { $0.1.status == 200 }, "some probes leave the minted token intact")
        try await bench.stop()
        let log = bench.gateway.process.standardError
        #expect(!secrets.contains { log.contains($0) }, "a secret reached the log")
    }
}
