internal import GatehouseCore

/// OAuth.io's domain whitelist, applied to the page origin and to `redirect_uri` on every
/// entry point. Entries are hosts (`example.com`), wildcard hosts (`*.example.com`, which
/// matches sub-domains only), or URLs whose scheme, port and path then must match too.
struct DomainCheck: Sendable {
    let domains: [String]
    /// The gateway's own host always passes: its pages may start flows.
    let gatewayHost: String?

    func allows(_ url: WebURL) -> Bool {
        if let gatewayHost, url.host == gatewayHost { return true }
        return domains.contains { entry in Self.matches(entry: entry, url) }
    }

    static func matches(entry text: String, _ url: WebURL) -> Bool {
        guard text != "*" else { return false }
        let hasScheme = text.containsBytes("://")
        guard let entry = WebURL(text, assumeHTTP: true) else { return false }
        if hasScheme, entry.scheme != url.scheme { return false }
        if let port = entry.port, port != url.port { return false }
        if !entry.path.isEmpty, entry.path != "/", entry.path != url.path { return false }
        if entry.host.hasPrefix("*.") {
            let suffix = String(entry.host.dropFirst(1))
            return url.host.hasSuffix(suffix) && url.host.count > suffix.count
        }
        return entry.host == url.host
    }
}
