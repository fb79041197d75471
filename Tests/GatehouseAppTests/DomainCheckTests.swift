@testable import GatehouseApp
import Testing

/// The whitelist alone, for page origins and redirect targets apart: each row names what
/// must pass and what must not, so a loosened comparison fails a row of its own.
@Suite("DomainCheck")
struct DomainCheckTests {
    private static let gateway = WebURL("https://gw.example.net")

    private func check(_ domains: [String]) -> DomainCheck {
        DomainCheck(domains: domains, gateway: Self.gateway)
    }

    private func page(_ domains: [String], _ text: String) -> Bool {
        guard let url = WebURL(text, assumeHTTP: true) else { return false }
        return check(domains).allowsPage(url)
    }

    private func redirect(_ domains: [String], _ text: String) -> Bool {
        guard let url = WebURL(text) else { return false }
        return check(domains).allowsRedirect(url)
    }

    @Test("hosts match exactly: look-alikes, suffixes and prefixes do not")
    func lookAlikes() {
        for use in [page, redirect] {
            #expect(use(["localhost"], "http://localhost/"))
            #expect(!use(["localhost"], "http://localhost.evil.example/"))
            #expect(!use(["example.com"], "https://example.com.evil/"))
            #expect(!use(["example.com"], "https://evilexample.com/"))
            #expect(!use(["example.com"], "https://sub.example.com/"))
            #expect(!use(["sub.example.com"], "https://example.com/"))
        }
    }

    @Test("a wildcard admits sub-domains at any depth, never the bare domain or a look-alike")
    func wildcards() {
        for use in [page, redirect] {
            #expect(use(["*.example.com"], "https://a.example.com"))
            #expect(use(["*.example.com"], "https://a.b.example.com/x"))
            #expect(!use(["*.example.com"], "https://example.com"))
            #expect(!use(["*.example.com"], "https://aexample.com"))
            #expect(!use(["*.example.com"], "https://a.example.com.evil"))
            #expect(!use(["*.example.com"], "https://*.example.com"))
            #expect(!use(["*"], "https://example.com"))
        }
    }

    @Test("trailing dots and case: case folds, a trailing dot is another name")
    func dotsAndCase() {
        for use in [page, redirect] {
            #expect(use(["Example.COM"], "https://example.com"))
            #expect(use(["example.com"], "https://EXAMPLE.com/"))
            #expect(!use(["example.com"], "https://example.com./"))
            #expect(!use(["example.com."], "https://example.com/"))
            #expect(!use(["*.example.com"], "https://a.example.com./"))
        }
    }

    @Test("IPv6 and ports: an entry's port must match, its default port is no port")
    func addressesAndPorts() {
        for use in [page, redirect] {
            #expect(use(["[::1]"], "http://[::1]:8080/"))
            #expect(!use(["[::1]"], "http://[::2]/"))
            #expect(use(["[::1]:8080"], "http://[::1]:8080/"))
            #expect(!use(["[::1]:8080"], "http://[::1]:8081/"))
            #expect(use(["localhost:3000"], "http://localhost:3000/cb"))
            #expect(!use(["localhost:3000"], "http://localhost:3001/cb"))
            #expect(!use(["localhost:3000"], "http://localhost/cb"))
            #expect(use(["https://example.com:443"], "https://example.com/"))
            #expect(use(["localhost"], "http://localhost:9999/"))
        }
    }

    @Test("an entry's path must match exactly; no path, or /, admits any")
    func paths() {
        #expect(redirect(["https://example.com/cb"], "https://example.com/cb"))
        #expect(!redirect(["https://example.com/cb"], "https://example.com/cb/x"))
        #expect(!redirect(["https://example.com/cb"], "https://example.com/other"))
        #expect(redirect(["https://example.com/"], "https://example.com/anything"))
        #expect(redirect(["example.com"], "https://example.com/anything?x#y"))
    }

    @Test("page origins: http and https only, an extension only when its entry names the scheme")
    func pageSchemes() {
        #expect(page(["example.com"], "https://example.com"))
        #expect(page(["example.com"], "http://example.com"))
        #expect(!page(["https://example.com"], "http://example.com"))
        #expect(!page(["example.com"], "oauthio://example.com"))
        #expect(!page(["example.com"], "ftp://example.com"))
        #expect(!page(["abcdef"], "chrome-extension://abcdef"))
        #expect(page(["chrome-extension://abcdef"], "chrome-extension://abcdef"))
        #expect(!page(["myapp://example.com"], "myapp://example.com"))
        for scheme in ["javascript", "data", "vbscript", "JavaScript", "file", "blob"] {
            #expect(!page(["*.example.com"], "\(scheme)://a.example.com"), "\(scheme)")
            #expect(!page(["\(scheme)://a.example.com"], "\(scheme)://a.example.com"), "\(scheme)")
        }
        #expect(!page(["*.example.com"], "javascript://%0aalert(1).example.com"))
    }

    @Test("redirect targets: a scheme-less entry admits http, https and oauthio; others only when named")
    func redirectSchemes() {
        #expect(redirect(["localhost"], "oauthio://localhost"))
        #expect(redirect(["example.com"], "https://example.com/cb"))
        for scheme in ["evilapp", "ms-msdt", "intent", "ftp", "chrome-extension"] {
            #expect(!redirect(["example.com"], "\(scheme)://example.com/x"), "\(scheme)")
        }
        #expect(redirect(["myapp://example.com"], "myapp://example.com/done"))
        #expect(!redirect(["myapp://example.com"], "otherapp://example.com/done"))
        #expect(!redirect(["myapp://example.com"], "https://example.com/done"))
        for scheme in ["javascript", "data", "vbscript"] {
            #expect(!redirect(["\(scheme)://example.com"], "\(scheme)://example.com"), "\(scheme)")
        }
    }

    @Test("the gateway's origin starts logins but never receives one; its host gets nothing else")
    func gatewayOrigin() {
        #expect(page([], "https://gw.example.net"))
        #expect(page([], "https://gw.example.net:443/start"))
        #expect(!page([], "http://gw.example.net"))
        #expect(!page([], "https://gw.example.net:8443"))
        #expect(!page([], "ftp://gw.example.net"))
        #expect(!redirect([], "https://gw.example.net/auth/github?k=x"))
        #expect(!redirect(["gw.example.net"], "https://gw.example.net/auth/github?k=x"))
        #expect(!redirect([], "http://gw.example.net:9999/x"))
        #expect(!redirect([], "evilapp://gw.example.net"))
        #expect(!redirect([], "ftp://gw.example.net/"))
        // Another port on the gateway's host is another server: the whitelist decides.
        #expect(redirect(["gw.example.net:3000"], "https://gw.example.net:3000/cb"))
    }
}

/// Where a server-side login's 302 sends the browser: the result in the query, and always a
/// fragment of the target's own, so none is inherited from the URL the 302 answers.
@Suite("Server redirect")
struct ServerRedirectTests {
    @Test("oauthio= before the fragment, and a fragment always present")
    func fragments() {
        #expect(ResultDelivery.serverRedirect("https://a.example/cb", encodedMessage: "M") == "https://a.example/cb?oauthio=M#")
        #expect(ResultDelivery.serverRedirect("https://a.example/cb?x=1", encodedMessage: "M") == "https://a.example/cb?x=1&oauthio=M#")
        #expect(ResultDelivery.serverRedirect("https://a.example/cb#tab", encodedMessage: "M") == "https://a.example/cb?oauthio=M#tab")
        #expect(ResultDelivery.serverRedirect("https://a.example/cb?#", encodedMessage: "M") == "https://a.example/cb?&oauthio=M#")
    }
}
