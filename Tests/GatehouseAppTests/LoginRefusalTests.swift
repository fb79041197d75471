import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// How a login start refuses (issue 41): errors an SDK can see, whitelist holes closed, and
/// the IE relay bound to the login's own origin.
@Suite("Login refusals")
struct LoginRefusalTests {
    private static func html(_ response: HTTPClientResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    /// The script's `var origin = "…";`, where the popup posts its message.
    private static func postedOrigin(_ response: HTTPClientResponse) -> String? {
        let page = html(response)
        guard let start = page.range(of: "var origin = \""), let end = page.range(of: "\";", range: start.upperBound..<page.endIndex)
        else { return nil }
        return String(page[start.upperBound..<end.lowerBound])
    }

    @Test("a popup with an unknown key or an unlisted page gets its error posted to the page; nothing of the app")
    func popupErrors() async throws {
        let bench = try await LoginBench.start()
        let unknown = try await bench.get(bench.base + "/auth/mock2?k=not-a-key&d=" + PercentEncoding.encode("http://localhost/"))
        #expect(unknown.status == 400)
        let unknownMessage = try LoginBench.message(unknown)
        #expect(unknownMessage["status"] == "error")
        #expect(unknownMessage["message"] == "Unknown public key")
        #expect(Self.postedOrigin(unknown) == "http://localhost")
        #expect(!Self.html(unknown).contains("Return to the site"))

        let outside = try await bench.get(bench.startURL("mock2", opts: #"{"state":"s1"}"#, origin: "https://elsewhere.example"))
        #expect(outside.status == 400)
        let outsideMessage = try LoginBench.message(outside)
        #expect(outsideMessage["message"] == #"Origin "https://elsewhere.example" does not match any registered domain"#)
        #expect(outsideMessage["state"] == "s1")
        #expect(outsideMessage["data"] == nil)
        #expect(Self.postedOrigin(outside) == "https://elsewhere.example")
        try await bench.stop()
    }

    @Test("a redirect to an unlisted address, or a page that is no web page, gets a plain page: no script, no redirect")
    func plainPages() async throws {
        let bench = try await LoginBench.start()
        let cases = [
            bench.startURL("mock2", extra: ["redirect_uri": "https://evil.example/cb"]),
            bench.base + "/auth/mock2?k=not-a-key&redirect_uri=" + PercentEncoding.encode("http://localhost/cb"),
            bench.startURL("mock2", extra: ["d": "javascript://localhost/%0aalert(1)"], origin: nil),
        ]
        for url in cases {
            let answer = try await bench.get(url)
            #expect(answer.status == 400, "\(url)")
            #expect(answer.header("location") == nil)
            #expect(answer.header("content-type")?.hasPrefix("text/html") == true)
            #expect(!Self.html(answer).contains("<script"), "\(url)")
            #expect(Self.html(answer).contains("Sign-in could not start"), "\(url)")
            #expect(answer.header("content-security-policy")?.contains("frame-ancestors 'none'") == true)
        }
        // Not a URL at all (no host a browser could have): a plain 400 before anything else.
        let unreadable = try await bench.get(bench.startURL("mock2", extra: ["d": "javascript://%0aalert(1).localhost"], origin: nil))
        #expect(unreadable.status == 400)
        #expect(!Self.html(unreadable).contains("<script"))
        try await bench.stop()
    }

    @Test("oauthv names a login the provider lacks: Unsupported oauth version, as oauthd answers")
    func unsupportedVersion() async throws {
        let bench = try await LoginBench.start()
        for version in ["1", "3"] {
            let answer = try await bench.get(bench.startURL("mock2", opts: #"{"state":"v"}"#, extra: ["oauthv": version]))
            #expect(try LoginBench.message(answer)["message"] == "Unsupported oauth version", "oauthv=\(version)")
        }
        #expect(try await bench.get(bench.startURL("mock2", extra: ["oauthv": "2"])).status == 302)
        try await bench.stop()
    }

    @Test("the gateway's own address is never a redirect_uri, whatever its scheme, port or path")
    func gatewayTargets() async throws {
        let bench = try await LoginBench.start()
        let host = try #require(URLComponents(string: bench.base)?.host)
        for target in [bench.base + "/auth/mock2?k=\(bench.key)", "http://\(host):9999/x", "evilapp://\(host)", "ftp://\(host)/"] {
            let answer = try await bench.get(bench.startURL("mock2", extra: ["redirect_uri": target]))
            #expect(answer.status == 400, "\(target)")
            #expect(answer.header("location") == nil, "\(target)")
        }
        try await bench.stop()
    }

    @Test("IE relay: the cookie names the login's origin and reaches the relay page alone, which only that origin may frame")
    func ieRelay() async throws {
        let bench = try await LoginBench.start()
        let agent = HTTPHeader(name: "User-Agent", value: "Mozilla/5.0 (Windows NT 10.0; Trident/7.0; rv:11.0) like Gecko")
        let start = try await bench.get(bench.startURL("mock2", opts: #"{"state":"ie","state_type":"client"}"#), headers: [agent])
        let callback = try #require(try await bench.get(start.header("location") ?? "").header("location"))
        let page = try await bench.get(callback, headers: [agent])
        let cookie = try #require(page.header("set-cookie"))
        #expect(cookie.contains("; Path=/auth/iframe;"))
        #expect(!cookie.contains("Secure"), "http public_url: a Secure cookie would never be set")
        let value = try #require(cookie.split(separator: ";").first?.dropFirst("oauthio_last=".count))
        let relayed = try #require(PercentEncoding.decode(value).flatMap { JSONValue.parse(Array($0.utf8)) })
        #expect(relayed["origin"] == "http://localhost")
        #expect(relayed["message"]?.stringValue.flatMap { JSONValue.parse(Array($0.utf8)) }?["state"] == "ie")

        let relay = try await bench.get(bench.base + "/auth/iframe?d=" + PercentEncoding.encode("http://localhost"))
        #expect(relay.header("content-security-policy")?.hasSuffix("frame-ancestors http://localhost") == true)
        #expect(Self.html(relay).contains("if (relayed.origin !== origin) { return; }"))
        #expect(Self.html(relay).contains("parent.postMessage(relayed.message, relayed.origin);"))
        for bad in ["javascript:alert(1)", "data://x", ""] {
            let refused = try await bench.get(bench.base + "/auth/iframe?d=" + PercentEncoding.encode(bad))
            #expect(refused.status == 400, "\(bad)")
            #expect(!Self.html(refused).contains("<script"))
        }
        try await bench.stop()
    }
}
