internal import GatehouseCore

/// OAuth.io's domain whitelist, applied to the page origin and to `redirect_uri` on every
/// entry point. Entries are hosts (`example.com`), wildcard hosts (`*.example.com`, which
/// matches sub-domains only), or URLs whose scheme, port and path then must match too.
///
/// Pages and redirect targets are checked apart, because they are trusted with different
/// things: a page receives the login result by `postMessage` and its origin may become a
/// link, so it is `http` or `https` (or a browser extension the entry names); a redirect
/// target receives the result in its URL, so it may be an app's own scheme, but only one an
/// entry names, besides the iOS SDK's `oauthio`.
struct DomainCheck: Sendable {
    enum Use: Sendable {
        case page, redirect
    }

    let domains: [String]
    /// The gateway's own origin (`public_url`): its pages may start flows, but no flow may end
    /// on it, since a redirect there would hand the result to another login (any app's).
    let gateway: WebURL?

    func allowsPage(_ url: WebURL) -> Bool {
        if let gateway, url.isWebPage, url.sameOrigin(gateway) { return true }
        return domains.contains { Self.matches(entry: $0, url, for: .page) }
    }

    func allowsRedirect(_ url: WebURL) -> Bool {
        if let gateway, url.sameOrigin(gateway) { return false }
        return domains.contains { Self.matches(entry: $0, url, for: .redirect) }
    }

    /// Schemes that run code or read local data where they open: never an origin or a target.
    static let executableSchemes: Set<String> = ["javascript", "data", "vbscript", "file", "blob", "about", "filesystem"]
    /// Page origins besides the web's own, admitted only when an entry names the scheme.
    static let extensionSchemes: Set<String> = ["chrome-extension", "moz-extension", "safari-web-extension"]
    /// What an entry without a scheme admits as a redirect target: the web, and the scheme the
    /// OAuth.io iOS SDK listens on.
    static let schemelessRedirectSchemes: Set<String> = ["http", "https", "oauthio"]

    static func matches(entry text: String, _ url: WebURL, for use: Use) -> Bool {
        guard text != "*", !url.host.utf8.contains(UInt8(ascii: "*")), !executableSchemes.contains(url.scheme) else { return false }
        let hasScheme = text.containsBytes("://")
        guard let entry = WebURL(text, assumeHTTP: true) else { return false }
        if hasScheme {
            guard entry.scheme == url.scheme else { return false }
            if use == .page, !url.isWebPage, !extensionSchemes.contains(url.scheme) { return false }
        } else {
            let admitted = use == .page ? url.isWebPage : schemelessRedirectSchemes.contains(url.scheme)
            guard admitted else { return false }
        }
        if let port = entry.port, port != url.port { return false }
        if !entry.path.isEmpty, entry.path != "/", entry.path != url.path { return false }
        if entry.host.hasPrefix("*.") {
            let suffix = entry.host.dropFirst(1)
            return url.host.hasSuffix(suffix) && url.host.count > suffix.count
        }
        return entry.host == url.host
    }
}
