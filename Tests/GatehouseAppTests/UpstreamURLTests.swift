import GatehouseCore
import HTTPServer
import Testing

@testable import GatehouseApp

@Suite("Upstream URLs and the oauthio header")
struct UpstreamURLTests {
    private let base = "https://graph.facebook.com/v19.0"

    private func resolve(_ raw: String, query: [FormField] = []) -> String? {
        if case .success(let url) = UpstreamURL.resolve(raw: raw, query: query, base: base) { return url }
        return nil
    }

    @Test("relative and same-origin absolute URLs resolve under the API base")
    func accepted() {
        #expect(resolve("%2Fme") == "https://graph.facebook.com/v19.0/me")
        #expect(resolve("me%2Ffeed%3Flimit%3D2") == "https://graph.facebook.com/v19.0/me/feed?limit=2")
        #expect(resolve("%2Fme", query: [FormField(name: "fields", value: "id,name")]) == "https://graph.facebook.com/v19.0/me?fields=id%2Cname")
        #expect(resolve("%2Fme%3Fa%3D1", query: [FormField(name: "b", value: "2")]) == "https://graph.facebook.com/v19.0/me?a=1", "a URL with a query keeps its own")
        #expect(resolve(PercentEncoding.encode("https://graph.facebook.com/v20.0/me")) == "https://graph.facebook.com/v20.0/me")
        #expect(resolve(PercentEncoding.encode("https://GRAPH.facebook.com/me")) != nil, "hosts compare case-insensitively")
        #expect(resolve(PercentEncoding.encode("/search?q=café au lait")) == "https://graph.facebook.com/v19.0/search?q=caf%C3%A9%20au%20lait")
        #expect(resolve(PercentEncoding.encode("/projects/group%2Fname")) != nil, "an encoded slash alone is not traversal")
    }

    @Test("everything that could leave the API host is refused")
    func refused() {
        let attacks = [
            "http://127.0.0.1:6284/healthz", "http://graph.facebook.com/me", "https://graph.facebook.com:8443/me",
            "https://graph.facebook.com.evil.example/me", "https://graph.facebook.com@evil.example/", "https://a:b@graph.facebook.com/me",
            "https://evil.example#@graph.facebook.com/", "https://evil.example?@graph.facebook.com/", "//evil.example/x", "\\\\evil.example",
            "https:\\\\evil.example", "file:///etc/passwd", "gopher://graph.facebook.com/", "javascript:alert(1)", "data:text/html,x",
            "../me", "/me/../../x", "%2e%2e/x", "..%2fx", "..%252fx", "%252e%252e%252fx", "./me", "/me/x\r\nHost: evil", "/me\u{7F}", "",
        ]
        for attack in attacks {
            #expect(resolve(PercentEncoding.encode(attack)) == nil, "\(attack.debugDescription)")
        }
        #expect(resolve("%zz") == nil, "a broken escape")
        #expect(UpstreamURL.climbs("/a/%2E%2E%2F%2E%2E%2Fb"))
        #expect(!UpstreamURL.climbs("/a/b..c/d"))
    }

    @Test("a dot segment with path parameters (`..;`, which Tomcat-style servers strip) is refused, however encoded")
    func dotSegmentsWithParameters() {
        let attacks = [
            "..;/x", "/me/..;/x", "/me/..;x/y", "/me/..;jsessionid=1/x", "/me/..;", "/me/.;/x", "/me/.;x", "./;/x",
            ".;",
            "/me/%2e%2e;/x", "/me/%2E.;/x", "/me/..%3b/x", "/me/..%3B/x", "/me/%2e%2e%3b/x", "/me/..%253b/x",
            "/me/%252e%252e%253Bx/y", "/me/.%3b/x", "/me/..;%2fx", "/me/..%3b%2fx", "/me/..%00/x", "/me/.%00;/x",
        ]
        for attack in attacks {
            #expect(resolve(PercentEncoding.encode(attack)) == nil, "\(attack)")
        }
        // Sent with its escapes left as they are, not encoded once more.
        for raw in ["%2Fme%2F%2e%2e;%2Fx", "%2Fme%2F..;x%2Fy", "me%2F.;%2Fx"] {
            #expect(resolve(raw) == nil, "\(raw)")
        }
        #expect(UpstreamURL.climbs("/v1/..;/admin"))
        #expect(UpstreamURL.climbs("/v1/%2e%2e%3Bx/admin"))
        // A parameter on any other segment, and dots that are not a whole segment, are no climb.
        #expect(resolve(PercentEncoding.encode("/me;v=1/feed")) == "https://graph.facebook.com/v19.0/me;v=1/feed")
        #expect(resolve(PercentEncoding.encode("/a/..b;c/d")) != nil)
        #expect(resolve(PercentEncoding.encode("/a/;../d")) != nil)
    }

    @Test("the oauthio header: encoded, unencoded, wholly encoded, and its refusals")
    func header() throws {
        func parse(_ value: String?) -> Result<OAuthioHeader, Refusal> {
            var headers = HTTPHeaders()
            if let value { headers.add("oauthio", value) }
            return OAuthioHeader.parse(HTTPRequest(method: "GET", rawPath: "/", query: [], headers: headers, body: [], requestID: "t"))
        }
        let plain = try parse("k=key123&access_token=abc%2Fdef&instance_url=https%3A%2F%2Fx.example").get()
        #expect(plain.key == "key123" && plain.token == "abc/def" && plain.fields["instance_url"] == "https://x.example")
        let raw = try parse("k=key123&token=abc/def%").get()
        #expect(raw.token == "abc/def%", "an unencoded value with a stray % is kept as sent")
        let whole = try parse(PercentEncoding.encode("k=key123&access_token=t1")).get()
        #expect(whole.token == "t1")
        let oauth1 = try parse("k=key123&oauthv=1&oauth_token=t&oauth_token_secret=s%2B").get()
        #expect(String(describing: oauth1.version) == "oauth1" && oauth1.token == "t" && oauth1.tokenSecret == "s+")
        for bad in [nil, "", "access_token=t", "k=key&x=a%0D%0Ab", "k=key&x=%00"] as [String?] {
            guard case .failure(let refusal) = parse(bad) else {
                Issue.record("accepted \(bad ?? "nil")")
                continue
            }
            #expect(refusal.response.status == 400)
        }
    }
}
