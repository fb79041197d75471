@testable import GatehouseApp
import Testing

@Suite("WebURL")
struct WebURLTests {
    private struct Parsed: Equatable, CustomStringConvertible {
        let scheme: String, host: String, port: Int?, path: String
        var description: String { "\(scheme)|\(host)|\(port.map(String.init) ?? "-")|\(path)" }
    }

    private func parse(_ text: String, assumeHTTP: Bool = false) -> Parsed? {
        WebURL(text, assumeHTTP: assumeHTTP).map { Parsed(scheme: $0.scheme, host: $0.host, port: $0.port, path: $0.path) }
    }

    @Test("scheme, host, port and path; case folded where URLs ignore case")
    func accepted() {
        #expect(parse("https://Example.COM:8443/a/B?x=1#y") == Parsed(scheme: "https", host: "example.com", port: 8443, path: "/a/B"))
        #expect(parse("HTTP://localhost") == Parsed(scheme: "http", host: "localhost", port: nil, path: ""))
        #expect(parse("http://host:/p") == Parsed(scheme: "http", host: "host", port: nil, path: "/p"))
        #expect(parse("http://[::1]:8080/p") == Parsed(scheme: "http", host: "[::1]", port: 8080, path: "/p"))
        #expect(parse("oauthio://localhost") == Parsed(scheme: "oauthio", host: "localhost", port: nil, path: ""))
        #expect(parse("chrome-extension://abcdef/") == Parsed(scheme: "chrome-extension", host: "abcdef", port: nil, path: "/"))
        #expect(parse("Java+S.x-1://h") == Parsed(scheme: "java+s.x-1", host: "h", port: nil, path: ""))
        #expect(parse("http://h?q=/x#/y") == Parsed(scheme: "http", host: "h", port: nil, path: ""))
    }

    @Test("origin: scheme, host and any port but the default, as browsers send it")
    func origins() {
        #expect(WebURL("https://Example.COM:8443/a?x")?.origin == "https://example.com:8443")
        #expect(WebURL("http://localhost/cb")?.origin == "http://localhost")
        #expect(WebURL("http://[::1]:65535")?.origin == "http://[::1]:65535")
        #expect(WebURL("oauthio://h:1")?.origin == "oauthio://h:1")
        #expect(WebURL("chrome-extension://abcdefghijklmnopabcdefghijklmnop/")?.origin == "chrome-extension://abcdefghijklmnopabcdefghijklmnop")
        #expect(WebURL("https://a.example:443/x")?.origin == "https://a.example")
        #expect(WebURL("http://a.example:80")?.origin == "http://a.example")
        #expect(WebURL("http://a.example:443")?.origin == "http://a.example:443")
        #expect(WebURL("oauthio://h:443")?.origin == "oauthio://h:443")
    }

    @Test("oauthd's fixes: one slash after the scheme, and no scheme when assumed http")
    func oauthdLeniency() {
        #expect(parse("https:/example.com/x") == Parsed(scheme: "https", host: "example.com", port: nil, path: "/x"))
        #expect(parse("example.com:81/x", assumeHTTP: true) == Parsed(scheme: "http", host: "example.com", port: 81, path: "/x"))
        #expect(parse("example.com") == nil)
    }

    @Test("refused: credentials, bad ports, bad schemes, spaces, backslashes, non-ASCII, no host")
    func refused() {
        for text in [
            "http://user@evil.example", "http://a:b@evil.example/", "http://host:0", "http://host:65536", "http://host:+80",
            "http://host:8o", "http://[::1]x", "http://[::1", "http://[::1]:", "1http://x", "+x://h", "://h", "http://",
            "http://ho st/", "http://a\\b", "http://hé.example", "é://h", "http://h/\u{7F}", "javascript:alert(1)",
            "http://h\r\n.example", "javascript://%0aalert(1).example.com", "http://a%2eexample", "http://[fe80::1%25eth0]/",
            "http://a(b).example", "http://[]/", "http://[::g]/", "http://a!b/", "http://a'b/",
        ] {
            #expect(parse(text) == nil, "\(text)")
        }
    }
}
