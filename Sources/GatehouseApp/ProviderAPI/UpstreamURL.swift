internal import GatehouseCore

/// Turns the `<url>` of `/request/:provider/<url>` into the URL Gatehouse calls, refusing
/// anything that would leave the provider's API: the SSRF guard oauthd lacked (§6.3).
///
/// Relative URLs are appended to the provider's request base; absolute ones must have
/// exactly the base's scheme, host and port. Userinfo (`api.example@evil`), protocol-relative
/// `//host`, backslashes, other schemes, control characters and `..` segments (also when
/// percent-encoded, `..%2f`, or with parameters, `..;`) are refused, so the path can never
/// climb above the base.
enum UpstreamURL {
    /// - Parameters:
    ///   - raw: the path remainder as received (still percent-encoded once, as
    ///     `encodeURIComponent` left it).
    ///   - query: the incoming request's own query, appended when the URL has none.
    ///   - base: the rendered `request.url` of the provider.
    static func resolve(raw: String, query: [FormField], base: String) -> Result<String, Refusal> {
        func refuse(_ message: String) -> Result<String, Refusal> { .failure(Refusal(JSend.error(400, message))) }
        guard let decoded = PercentEncoding.decode(raw) else { return refuse("The URL is not correctly percent-encoded") }
        guard !decoded.isEmpty else { return refuse("Missing the URL to call") }
        guard !ForwardingRules.hasControlCharacters(decoded) else { return refuse("The URL contains control characters") }
        guard !decoded.utf8.contains(UInt8(ascii: "\\")) else { return refuse("The URL contains a backslash") }
        guard let baseURL = WebURL(base), baseURL.scheme == "http" || baseURL.scheme == "https" else {
            return refuse("The provider has no usable API base URL")
        }
        var target = escapeUnsafe(decoded)
        if !target.utf8.contains(UInt8(ascii: "?")), !query.isEmpty {
            target += "?" + PercentEncoding.formEncoded(query.lazy.map { ($0.name, $0.value) })
        }
        let url: String
        if hasScheme(target) {
            guard let parsed = WebURL(target), ["http", "https"].contains(parsed.scheme), target.containsBytes("://") else {
                return refuse("Only http(s) URLs on the provider's API host are allowed")
            }
            guard parsed.origin == baseURL.origin else {
                return refuse("Absolute URLs must be on the provider's API host (\(baseURL.origin))")
            }
            url = target
        } else {
            guard !target.hasPrefix("//") else { return refuse("Protocol-relative URLs are not allowed") }
            let trimmedBase = base.hasSuffix("/") ? String(base.dropLast()) : base
            url = trimmedBase + "/" + (target.hasPrefix("/") ? String(target.dropFirst()) : target)
        }
        guard let final = WebURL(url), final.origin == baseURL.origin else {
            return refuse("The URL does not stay on the provider's API host")
        }
        guard !climbs(final.path) else { return refuse("The URL path may not contain '.' or '..' segments") }
        return .success(url)
    }

    /// `scheme:` at the start, as RFC 3986 §3.1 spells a scheme.
    static func hasScheme(_ text: String) -> Bool {
        let bytes = text.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return false }
        return WebURL.isSchemeName(bytes[..<colon])
    }

    /// True if some segment, percent-decoded as often as it takes, is `.` or `..` (a path a
    /// server might resolve upwards), whether split by `/` as sent or by an encoded `%2f`, and
    /// also with path parameters (`..;x`): Tomcat-style servers drop them before resolving.
    static func climbs(_ path: String) -> Bool {
        var text = path
        for _ in 0..<4 {
            let pieces = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "/" || $0 == "\\" })
            if pieces.contains(where: isDotSegment) { return true }
            guard text.utf8.contains(UInt8(ascii: "%")), let decoded = PercentEncoding.decode(text) else { return false }
            if decoded == text { return false }
            text = decoded
        }
        return true
    }

    /// `.` or `..`, once any `;` parameters are cut off, or anything after a NUL (an escaped
    /// `%00`, decoded here, ends a C string upstream).
    private static func isDotSegment(_ segment: Substring) -> Bool {
        let name = segment.utf8.prefix { $0 != UInt8(ascii: ";") && $0 != 0 }
        return name.count <= 2 && !name.isEmpty && name.allSatisfy { $0 == UInt8(ascii: ".") }
    }

    /// Spaces and non-ASCII (left by decoding) re-encoded, so the URL is valid on the wire.
    private static func escapeUnsafe(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x20 || $0 >= 0x80 || $0 == 0x22 || $0 == 0x3C || $0 == 0x3E }) else { return text }
        var output = ""
        let digits = Array("0123456789ABCDEF".unicodeScalars)
        for byte in text.utf8 {
            if byte == 0x20 || byte >= 0x80 || byte == 0x22 || byte == 0x3C || byte == 0x3E {
                output.unicodeScalars.append("%")
                output.unicodeScalars.append(digits[Int(byte >> 4)])
                output.unicodeScalars.append(digits[Int(byte & 0x0F)])
            } else {
                output.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return output
    }
}

/// What may travel between the caller and the provider.
enum ForwardingRules {
    /// Never sent upstream: Gatehouse's own credentials header, the caller's identity and
    /// cookies for the gateway's origin, and hop-by-hop or framing fields (RFC 9110 §7.6.1).
    static let droppedRequestHeaders: Set<String> = [
        "oauthio", "cookie", "cookie2", "host", "origin", "referer", "x-requested-with", "connection", "keep-alive", "proxy-connection",
        "proxy-authorization", "proxy-authenticate", "te", "trailer", "trailers", "transfer-encoding", "upgrade", "content-length",
        "expect", "accept-encoding", "x-request-id", "forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto",
        "x-real-ip",
    ]

    /// Never passed back: hop-by-hop fields, framing that no longer matches the (decoded)
    /// body, the provider's own CORS (Gatehouse sets its own) and cookies for the provider's
    /// domain, which the browser would otherwise attribute to the gateway.
    static let droppedResponseHeaders: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "te", "trailer", "trailers", "transfer-encoding",
        "upgrade", "content-length", "content-encoding", "set-cookie", "set-cookie2", "access-control-allow-origin",
        "access-control-allow-methods", "access-control-allow-headers", "access-control-allow-credentials",
        "access-control-expose-headers", "access-control-max-age", "date", "server",
    ]

    /// CR, LF, NUL and the other C0 controls (and DEL): never forwarded anywhere.
    static func hasControlCharacters(_ text: String) -> Bool {
        text.utf8.contains { $0 < 0x20 || $0 == 0x7F }
    }
}
