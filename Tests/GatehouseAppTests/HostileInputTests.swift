import Foundation
import GatehouseCore
import GatehouseTestSupport
import Testing

/// Hostile values on every route of a gateway that has a real app, keysets and a real
/// store: what the byte-level fuzz in ServeTests cannot reach, since its requests never get
/// past the HTTP parser into the handlers.
@Suite("hostile input")
struct HostileInputTests {
    /// Values that broke parsers and templates elsewhere: bad escapes and UTF-8, markup,
    /// control characters (encoded), deep nesting, huge numbers, foreign URLs and schemes.
    static let values = [
        "", "%", "%zz", "%ff%fe", "%c0%af", "%00", "%0d%0aX-Injected:%201", "..", "%2e%2e%2f", "\u{2028}",
        "</script><script>alert(1)</script>", "\"'><img src=x onerror=alert(1)>", "javascript:alert(1)", "é😀",
        String(repeating: "A", count: 3000), "{", "[]", "null", #"{"state":"#, String(repeating: "[", count: 2000),
        "1e999999", "18446744073709551616", "-1", "http://evil.example", "//evil.example/x", "http://user@localhost",
        "http://127.0.0.1:1/x", "oauthio://localhost", "chrome-extension://abc", "file:///etc/passwd", "server", "true",
    ]
    static let providers = [
        "mock2", "mockpkce", "mock1", "mockpost", "mockpar", "mocksplithost", "mocksignedinfo", "mock1key", "mockexport", "mockjar", "mockenc",
        "mockhs", "mocktenant", "facebook", "apple",
        "emay", "nope", "%2e%2e", "A%00",
    ]

    struct Probe: Sendable {
        let description: String
        let text: String
        /// Routes that call a provider may pass its failure on (501 for no `me`, 502, 504).
        var reachesUpstream = false
        /// `/request` returns the provider's answer as it came, JSON or not.
        var relaysBody = false
        /// The admin API shows an app's secret to the admin, as `apps show` does.
        var showsAppSecret = false
        /// Login starts and the IE relay answer a browser: their refusals are HTML pages.
        var servesPage = false
    }

    @Test("hostile values on every route get 4xx JSON answers, and no secret is echoed or logged", arguments: TestStore.allCases)
    func hostileValues(store: TestStore) async throws {
        // The shipped limits, on: a 429 is an answer like any other 4xx.
        let bench = try await LoginBench.start(
            store: try await store.location(), extra: ["--rate-limit-app", "20/s", "--rate-limit-address", "30/min"])
        let port = bench.gateway.port
        var generator = SeededGenerator(seed: 0xB4D_1A9B7)
        let probes = (0..<1500).map { _ in Self.probe(key: bench.key, secret: bench.secret, using: &generator) }
        let outcomes = try await withThrowingTaskGroup(of: [(Probe, Result<RawResponse, RawHTTPError>)].self) { group in
            for worker in 0..<6 {
                let mine = stride(from: worker, to: probes.count, by: 6).map { probes[$0] }
                group.addTask {
                    try await offPool { mine.map { probe in (probe, Result { () throws(RawHTTPError) in try Self.send(probe, port: port) }) } }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        var answers: [(Probe, RawResponse)] = []
        for (probe, outcome) in outcomes {
            switch outcome {
            case .success(let answer): answers.append((probe, answer))
            case .failure(let error):
                Issue.record("\(error) for \(probe.description); gateway running: \(bench.gateway.process.isRunning)")
            }
        }
        if answers.count < outcomes.count {
            let unusual = bench.gateway.process.standardError.split(separator: "\n").filter { !$0.contains(#""level":"info""#) }
            Issue.record("gateway log, all but info lines: \(unusual.suffix(40).joined(separator: "\n"))")
        }
        for (probe, answer) in answers {
            let tolerated = probe.reachesUpstream && [501, 502, 504].contains(answer.status)
            #expect(answer.status < 500 || tolerated, "\(answer.status) for \(probe.description)")
            // libmicrohttpd's own refusals (a request it cannot parse) never reach a handler and
            // carry no request id; everything Gatehouse answers with an error is JSON.
            if answer.status >= 400, answer.header("X-Request-Id") != nil, probe.servesPage,
                answer.header("Content-Type")?.hasPrefix("text/html") == true
            {
                #expect(answer.header("Content-Security-Policy")?.contains("default-src 'none'") == true, "\(probe.description)")
                for markup in ["<script>alert", "<img src=x", "javascript:alert"] {
                    #expect(!answer.text.contains(markup), "unescaped \(markup) in the page for \(probe.description)")
                }
            } else if answer.status >= 400, answer.header("X-Request-Id") != nil, !probe.relaysBody {
                #expect(answer.header("Content-Type")?.hasPrefix("application/json") == true, "\(probe.description)")
                #expect(JSONValue.parse(answer.body) != nil, "\(probe.description)")
            }
            #expect(probe.showsAppSecret || !answer.text.contains(bench.secret), "app secret echoed by \(probe.description)")
            #expect(!answer.text.contains("secret-1") && !answer.text.contains("cs-1"), "keyset secret in \(probe.description)")
        }
        #expect(bench.gateway.process.isRunning)
        #expect(try await request(port: port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").status == 200)
        // Read once the process has ended and its output is drained, so no late line escapes.
        #expect(try await bench.gateway.stop() == 0)
        bench.mock.stop()
        let log = bench.gateway.process.standardError + bench.gateway.process.standardOutput
        for secret in [bench.secret, "secret-1", "cs-1", Gateway.adminToken] {
            #expect(!log.contains(secret), "a secret reached the log")
        }
    }

    /// One probe on a fresh connection. A connection that fails before any answer is tried
    /// once more: in two of about twenty full-suite runs, one of the 3,000 connections was
    /// closed unanswered while the gateway ran on, and no repetition on its own reproduced
    /// it. A probe the gateway really cannot answer fails both times.
    static func send(_ probe: Probe, port: UInt16) throws(RawHTTPError) -> RawResponse {
        var lastError = RawHTTPError("not sent")
        for _ in 0..<2 {
            do {
                return try rawRequest(port: port, probe.text)
            } catch let error as RawHTTPError {
                lastError = error
            } catch {
                lastError = RawHTTPError("\(error)")
            }
        }
        throw lastError
    }

    static func probe(key: String, secret: String, using generator: inout SeededGenerator) -> Probe {
        func value() -> String { values.randomElement(using: &generator) ?? "" }
        /// Percent-encoded for a URL or form, or (a quarter of the time) left as it is, minus
        /// what would end the request line.
        func encoded(_ text: String) -> String {
            Bool.random(using: &generator) || Bool.random(using: &generator)
                ? PercentEncoding.encode(text)
                : text.replacingOccurrences(of: " ", with: "%20").replacingOccurrences(of: "#", with: "%23")
        }
        func query(_ names: [String]) -> String {
            names.filter { _ in Int.random(in: 0..<10, using: &generator) < 7 }.map { "\($0)=\(encoded(value()))" }
                .joined(separator: "&")
        }
        func form(_ names: [String]) -> String {
            var fields = names.filter { _ in Bool.random(using: &generator) }.map { "\($0)=\(encoded(value()))" }
            fields.append("key=" + (Bool.random(using: &generator) ? key : encoded(value())))
            if Bool.random(using: &generator) { fields.append("secret=" + secret) }
            return fields.joined(separator: "&")
        }
        let provider = providers.randomElement(using: &generator) ?? "mock2"
        var headers = ["Host: gatehouse.test", "Connection: close"]
        if Bool.random(using: &generator) { headers.append("Origin: " + value()) }
        if Int.random(in: 0..<4, using: &generator) == 0 { headers.append("Referer: " + value()) }
        var method = "GET"
        var target: String
        var body = ""
        var reachesUpstream = false
        var relaysBody = false
        var showsAppSecret = false
        var servesPage = false
        switch Int.random(in: 0..<7, using: &generator) {
        case 0:
            target = "/auth/\(provider)?k=\(key)&" + query(["k", "d", "opts", "redirect_uri", "redirect_type", "mobile", "oauthv"])
            servesPage = true
        case 1:
            target = "/auth?" + query(["state", "code", "error", "error_description", "oauth_token", "oauth_verifier", "id_token", "user"])
            if Bool.random(using: &generator) {
                method = "POST"
                body = String(target.dropFirst("/auth?".count))
                target = "/auth"
                headers.append("Content-Type: application/x-www-form-urlencoded")
            }
        case 2:
            method = "POST"
            target = ["/auth/access_token", "/auth/refresh_token/\(provider)", "/auth/revoke/\(provider)", "/auth/\(provider)/native"]
                .randomElement(using: &generator) ?? "/auth/access_token"
            let names = ["code", "token", "identity_token", "authorization_code", "nonce", "user", "state", "k", "mode"]
            if Bool.random(using: &generator) {
                body = form(names)
                headers.append("Content-Type: application/x-www-form-urlencoded")
            } else {
                var object: JSONObject = ["key": .string(key), "secret": .string(secret)]
                for name in names where Bool.random(using: &generator) { object[name] = .string(value()) }
                body = String(decoding: JSONValue.object(object).serialized(), as: UTF8.self)
                headers.append("Content-Type: application/json")
            }
            reachesUpstream = true
        case 3:
            let oauthio = "k=\(key)&access_token=\(encoded(value()))&oauthv=\(encoded(value()))"
            headers.append("oauthio: " + (Bool.random(using: &generator) ? PercentEncoding.encode(oauthio) : oauthio))
            if Bool.random(using: &generator) {
                target = "/auth/\(provider)/me?filter=" + encoded(value())
            } else {
                method = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"].randomElement(using: &generator) ?? "GET"
                target = "/request/\(provider)/" + encoded(value())
                relaysBody = true
            }
            reachesUpstream = true
        case 4:
            headers.append("Authorization: Bearer " + (Bool.random(using: &generator) ? Gateway.adminToken : encoded(value())))
            let app = Bool.random(using: &generator) ? key : encoded(value())
            (method, target) = [("POST", "/api/admin/apps"), ("PATCH", "/api/admin/apps/\(app)"), ("GET", "/api/admin/apps/\(app)"),
                                ("PUT", "/api/admin/apps/\(app)/keysets/\(provider)")].randomElement(using: &generator) ?? ("GET", "/")
            let field = [#"{"name":"#, #"{"domains":["#, #"{"parameters":{"client_id":"#, #"{"response_type":"#]
                .randomElement(using: &generator) ?? "{"
            body = field + String(decoding: JSONValue.string(value()).serialized(), as: UTF8.self) + (Bool.random(using: &generator) ? "}" : "]}")
            headers.append("Content-Type: application/json")
            showsAppSecret = true
        case 5:
            target = ["/api/providers/\(provider)?extend=" + encoded(value()), "/api/providers/\(provider)/logo",
                      "/auth/iframe?" + query(["d", "k"]), "/api/extended-endpoints", "/auth/\(provider)/jwks?" + query(["k"])]
                .randomElement(using: &generator) ?? "/"
            servesPage = target.hasPrefix("/auth/iframe")
        default:
            method = ["GET", "POST", "DELETE", "TRACE", "BREW"].randomElement(using: &generator) ?? "GET"
            target = "/" + encoded(value()) + "/" + encoded(value())
        }
        if !body.isEmpty || method == "POST" || method == "PUT" || method == "PATCH" { headers.append("Content-Length: \(body.utf8.count)") }
        let text = "\(method) \(target) HTTP/1.1\r\n" + headers.joined(separator: "\r\n") + "\r\n\r\n" + body
        return Probe(
            description: "\(method) \(target.prefix(200)) \(body.prefix(200))", text: text, reachesUpstream: reachesUpstream,
            relaysBody: relaysBody, showsAppSecret: showsAppSecret, servesPage: servesPage)
    }
}
