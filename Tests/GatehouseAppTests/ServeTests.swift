import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Serving", .serialized)
struct ServeTests {
    @Test("health and readiness answer; SIGTERM drains and exits 0")
    func lifecycle() async throws {
        let gateway = try await Gateway.start(store: "sqlite:./data/gatehouse.db")
        let health = try await gateway.send("GET", "/healthz", token: nil)
        #expect(health.status == 200)
        #expect(health.json == ["status": "ok"])
        let ready = try await gateway.send("GET", "/readyz", token: nil)
        #expect(ready.status == 200)
        #expect(try await gateway.stop() == 0)
        #expect(gateway.process.standardError.contains("\"message\":\"Stopped\""))
    }

    @Test("a second server on the same SQLite database is refused; it may start once the first stops")
    func oneServerPerDatabase() async throws {
        let first = try await Gateway.start(store: "sqlite:./data/gatehouse.db")
        let second = try await GatehouseProcess.run(
            ["serve", "--listen", "127.0.0.1:0", "--store", "sqlite:./data/gatehouse.db", "--providers", first.workspace.providers],
            directory: first.workspace.path)
        #expect(second.status == 2)
        #expect(second.stderr.contains("another gatehouse serve uses sqlite:./data/gatehouse.db"))
        #expect(try await first.send("GET", "/readyz", token: nil).status == 200)
        #expect(try await first.stop() == 0)
        let third = try await Gateway.start(workspace: first.workspace, store: "sqlite:./data/gatehouse.db")
        #expect(try await third.send("GET", "/readyz", token: nil).status == 200)
        #expect(try await third.stop() == 0)
    }

    @Test("a head past the header limit gets 431; --max-header-bytes raises the limit")
    func headerLimit() async throws {
        let cookie = "Cookie: c=" + String(repeating: "x", count: 24 << 10) + "\r\n"
        let probe = "GET /healthz HTTP/1.1\r\nHost: x\r\n" + cookie + "Connection: close\r\n\r\n"
        let standard = try await Gateway.start()
        #expect(try await request(port: standard.port, probe).status == 431)
        #expect(try await standard.stop() == 0)
        let raised = try await Gateway.start(extra: ["--max-header-bytes", "65536"])
        #expect(try await request(port: raised.port, probe).status == 200)
        #expect(try await raised.stop() == 0)
    }

    @Test("SIGINT stops the server cleanly too")
    func interrupt() async throws {
        let gateway = try await Gateway.start()
        gateway.client.shutdown()
        #expect(try await gateway.process.stop(signal: SIGINT) == 0)
    }

    @Test("admin API: right token works, wrong or missing token is 401, no token configured is 404")
    func adminAuthentication() async throws {
        let gateway = try await Gateway.start()
        #expect(try await gateway.send("GET", "/api/admin/apps").status == 200)
        let wrong = try await gateway.send("GET", "/api/admin/apps", token: "not-the-right-token-at-all")
        #expect(wrong.status == 401)
        #expect(wrong.json?["error"] == "unauthorized")
        #expect(wrong.header("www-authenticate")?.hasPrefix("Bearer") == true)
        #expect(try await gateway.send("GET", "/api/admin/apps", token: nil).status == 401)
        #expect(try await gateway.send("POST", "/api/admin/apps", body: #"{"name":"x"}"#, token: nil).status == 401)
        #expect(try await gateway.stop() == 0)

        let closed = try await Gateway.start(adminToken: nil)
        #expect(try await closed.send("GET", "/api/admin/apps").status == 404)
        #expect(try await closed.send("GET", "/api/admin/apps", token: nil).status == 404)
        #expect(try await closed.stop() == 0)
    }

    @Test("admin API manages apps and keysets")
    func adminCRUD() async throws {
        let gateway = try await Gateway.start()
        let created = try await gateway.send("POST", "/api/admin/apps", body: #"{"name":"shop","domains":["shop.example.com","localhost"]}"#)
        #expect(created.status == 201)
        let key = try #require(created.json?["key"]?.stringValue)
        let secret = try #require(created.json?["secret"]?.stringValue)
        #expect(try await gateway.send("GET", "/api/admin/apps").json?.arrayValue?.count == 1)

        let patched = try await gateway.send("PATCH", "/api/admin/apps/\(key)", body: #"{"name":"shop2","rotate_secret":true}"#)
        #expect(patched.status == 200)
        #expect(patched.json?["name"] == "shop2")
        #expect(patched.json?["secret"]?.stringValue != secret)

        let put = try await gateway.send(
            "PUT", "/api/admin/apps/\(key)/keysets/github",
            body: #"{"parameters":{"client_id":"id1","client_secret":"s1","scope":["user"]},"response_type":"token"}"#)
        #expect(put.status == 200)
        #expect(put.json?["parameters"]?["client_secret"] == "********")
        let unknownProvider = try await gateway.send("PUT", "/api/admin/apps/\(key)/keysets/nope", body: #"{"parameters":{}}"#)
        #expect(unknownProvider.status == 400)
        let badType = try await gateway.send("PUT", "/api/admin/apps/\(key)/keysets/github", body: #"{"response_type":"all"}"#)
        #expect(badType.status == 400)
        let badParameter = try await gateway.send("PUT", "/api/admin/apps/\(key)/keysets/github", body: #"{"parameters":{"a":{"b":1}}}"#)
        #expect(badParameter.status == 400)
        let shown = try await gateway.send("GET", "/api/admin/apps/\(key)")
        #expect(shown.json?["keysets"]?.arrayValue?.count == 1)
        #expect(try await gateway.send("DELETE", "/api/admin/apps/\(key)/keysets/github").status == 204)
        #expect(try await gateway.send("DELETE", "/api/admin/apps/\(key)/keysets/github").status == 404)
        #expect(try await gateway.send("DELETE", "/api/admin/apps/\(key)").status == 204)
        #expect(try await gateway.send("GET", "/api/admin/apps/\(key)").status == 404)
        #expect(try await gateway.send("GET", "/api/admin/apps/not-a-key").status == 404)
        #expect(try await gateway.send("PUT", "/api/admin/apps/\(key)/keysets/github", body: #"{"parameters":{}}"#).status == 404)
        #expect(try await gateway.stop() == 0)
        let log = gateway.process.standardError
        #expect(!log.contains(secret) && !log.contains(Gateway.adminToken), "logs never carry secrets or the admin token")
    }

    @Test("bad bodies get clear JSON errors with 4xx statuses")
    func badBodies() async throws {
        let gateway = try await Gateway.start()
        let cases: [(String, Int, String)] = [
            (#"{"name":"x","#, 400, "invalid_json"),
            ("[1,2]", 400, "invalid_request"),
            (#"{"name":"x","domain":"typo.com"}"#, 400, "invalid_request"),
            (#"{"name":""}"#, 400, "invalid_request"),
            (#"{"name":42}"#, 400, "invalid_request"),
            (#"{"name":"x","domains":["bad domain"]}"#, 400, "invalid_request"),
            (#"{"name":"x","domains":"one"}"#, 400, "invalid_request"),
            ("", 400, "invalid_request"),
            ("\u{FF}\u{FE}", 400, "invalid_json"),
            (String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000), 400, "invalid_json"),
        ]
        for (body, status, code) in cases {
            let response = try await gateway.send("POST", "/api/admin/apps", body: body)
            #expect(response.status == status, "\(body)")
            #expect(response.json?["error"]?.stringValue == code, "\(body)")
            #expect(response.json?["error_description"]?.stringValue?.isEmpty == false)
        }
        let huge = String(repeating: "x", count: 2 << 20)
        let tooLarge = try await gateway.send("POST", "/api/admin/apps", body: #"{"name":"\#(huge)"}"#)
        #expect(tooLarge.status == 413)
        #expect(tooLarge.json?["error"] == "payload_too_large")
        #expect(try await gateway.send("GET", "/healthz", token: nil).status == 200)
        #expect(try await gateway.stop() == 0)
    }

    @Test("thousands of random and truncated requests never stop /healthz from answering")
    func fuzz() async throws {
        let gateway = try await Gateway.start()
        let port = gateway.port
        var generator = SeededGenerator(seed: 0x5EED)
        var payloads: [[UInt8]] = []
        let templates = [
            "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
            "POST /api/admin/apps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Gateway.adminToken)\r\nContent-Length: 24\r\n\r\n{\"name\":\"fuzz\",\"domains\"",
            "PUT /api/admin/apps/abc/keysets/github HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            "GET /api/admin/apps/%zz?x=%%%&y HTTP/1.0\r\n\r\n",
        ]
        for index in 0..<3000 {
            var bytes = Array(templates[index % templates.count].utf8)
            switch index % 5 {
            case 0: bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
            case 1: for _ in 0..<8 { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            case 2: bytes = (0..<Int.random(in: 1...400, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            case 3: bytes.insert(contentsOf: Array("X-Junk: \u{1}\u{2}\r\n".utf8), at: min(bytes.count, 18))
            default: bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator))) + [0, 13, 10, 13, 10]
            }
            payloads.append(bytes)
        }
        // Truncated requests leave the server waiting for the rest until its idle timeout, so
        // the client waits only briefly for an answer; the check is that the server lives on.
        let batches = stride(from: 0, to: payloads.count, by: 500).map { Array(payloads[$0..<min($0 + 500, payloads.count)]) }
        for batch in batches {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for slice in stride(from: 0, to: batch.count, by: 25) {
                    let part = Array(batch[slice..<min(slice + 25, batch.count)])
                    group.addTask {
                        _ = try await offPool {
                            for payload in part {
                                guard let connection = try? RawHTTPConnection(port: port, timeoutMilliseconds: 100) else { continue }
                                connection.send(payload)
                                connection.finishWriting()
                                _ = try? connection.readResponse()
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await request(port: port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)
        }
        #expect(gateway.process.isRunning)
        #expect(try await gateway.send("GET", "/api/admin/apps").status == 200)
        #expect(try await gateway.stop() == 0)
    }
}
