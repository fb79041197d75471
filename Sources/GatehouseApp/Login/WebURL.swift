internal import GatehouseCore

/// Just enough URL parsing for origin and whitelist checks: scheme, host, port, path.
/// Anything with characters a browser would not send, or with credentials in it, is refused;
/// so is a host that is not a DNS name, a `*.` wildcard (for whitelist entries) or a bracketed
/// IPv6 address. A scheme's default port is no port, as in the Origin header browsers send.
struct WebURL: Sendable, Hashable {
    let scheme: String
    let host: String
    let port: Int?
    let path: String

    /// Parses `scheme://host[:port][/path][?query][#fragment]`. With `assumeHTTP`, text without
    /// a scheme is read as `http://` (oauthd's rule for whitelist entries and `d`).
    ///
    /// URLs travel as ASCII, so anything else is refused first and the rest of the parse works
    /// on bytes: this runs several times per login and per proxied call, and walking
    /// `Character`s (grapheme breaking) cost more than everything else here.
    init?(_ text: String, assumeHTTP: Bool = false) {
        var bytes = Array(text.utf8)
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        // oauthd's fixUrl: some clients send `https:/host`.
        if let colon = bytes.firstIndex(of: Self.colon), colon + 1 < bytes.count, bytes[colon + 1] == Self.slash,
            colon + 2 >= bytes.count || bytes[colon + 2] != Self.slash
        {
            bytes.insert(Self.slash, at: colon + 1)
        }
        var rest = bytes[...]
        if let separator = Self.schemeSeparator(in: rest) {
            let scheme = rest[..<separator]
            guard Self.isSchemeName(scheme) else { return nil }
            self.scheme = Self.lowercased(scheme)
            rest = rest[(separator + 3)...]
        } else if assumeHTTP {
            scheme = "http"
        } else {
            return nil
        }
        guard rest.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }) else { return nil }
        let authorityEnd = rest.firstIndex { $0 == Self.slash || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.contains(UInt8(ascii: "@")) else { return nil }
        var hostPart = authority
        var portText: ArraySlice<UInt8>?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            hostPart = authority[...close]
            let after = authority[(close + 1)...]
            if after.first == Self.colon {
                guard after.count > 1 else { return nil }
                portText = after.dropFirst()
            } else if !after.isEmpty {
                return nil
            }
        } else if let colon = authority.lastIndex(of: Self.colon) {
            hostPart = authority[..<colon]
            let text = authority[(colon + 1)...]
            if !text.isEmpty { portText = text }
        }
        if let portText {
            guard portText.count <= 5, portText.allSatisfy(Self.isDigit) else { return nil }
            let value = portText.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            guard (1...65535).contains(value) else { return nil }
            port = Self.defaultPort(self.scheme) == value ? nil : value
        } else {
            port = nil
        }
        guard Self.isHost(hostPart) else { return nil }
        host = Self.lowercased(hostPart)
        let pathEnd = rest[authorityEnd...].firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? rest.endIndex
        path = String(decoding: rest[authorityEnd..<pathEnd], as: UTF8.self)
    }

    private static let colon = UInt8(ascii: ":")
    private static let slash = UInt8(ascii: "/")

    /// RFC 3986 §3.1: a letter, then letters, digits, `+`, `-` and `.`.
    static func isSchemeName(_ bytes: some Collection<UInt8>) -> Bool {
        guard let first = bytes.first, isLetter(first) else { return false }
        return bytes.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// Through an array, not a lazy map: decoding a lazy sequence costs a dynamic cast on
    /// every call, and each login parses two or three URLs. Text already in lowercase, as
    /// nearly every scheme and host is, is decoded as it is.
    private static func lowercased(_ bytes: ArraySlice<UInt8>) -> String {
        let isUpper = { (byte: UInt8) in byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") }
        guard bytes.contains(where: isUpper) else { return String(decoding: bytes, as: UTF8.self) }
        return String(decoding: bytes.map { isUpper($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// Where the first `://` starts.
    private static func schemeSeparator(in bytes: ArraySlice<UInt8>) -> Int? {
        var index = bytes.startIndex
        while index + 2 < bytes.endIndex {
            if bytes[index] == colon, bytes[index + 1] == slash, bytes[index + 2] == slash { return index }
            index += 1
        }
        return nil
    }

    /// `scheme://host[:port]`, the form `postMessage` targets and browsers send as Origin.
    var origin: String {
        // `:port` is at most six bytes, a small string with no allocation of its own; the rest
        // is written into the result's storage (interpolation and appends made two or three).
        let port = port.map { ":" + String($0) } ?? ""
        return String(unsafeUninitializedCapacity: scheme.utf8.count + 3 + host.utf8.count + port.utf8.count) { out in
            var at = out[...].initialize(fromContentsOf: scheme.utf8)
            at = out[at...].initialize(fromContentsOf: "://".utf8)
            at = out[at...].initialize(fromContentsOf: host.utf8)
            return out[at...].initialize(fromContentsOf: port.utf8)
        }
    }

    /// An `http` or `https` URL: what a web page's origin is.
    var isWebPage: Bool { scheme == "http" || scheme == "https" }

    /// Same scheme, host and port (default ports are already folded away).
    func sameOrigin(_ other: WebURL) -> Bool {
        scheme == other.scheme && host == other.host && port == other.port
    }

    private static func defaultPort(_ scheme: String) -> Int? {
        switch scheme {
        case "http": 80
        case "https": 443
        default: nil
        }
    }

    /// A DNS name's letters, digits, `-`, `_` and dots (with `*` for whitelist wildcards), or a
    /// bracketed IPv6 address; never `%`, so no zone ids and no encoded bytes in a host.
    private static func isHost(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard let first = bytes.first else { return false }
        if first == UInt8(ascii: "[") {
            let inner = bytes.dropFirst().dropLast()
            return bytes.last == UInt8(ascii: "]") && !inner.isEmpty
                && inner.allSatisfy { isHexDigit($0) || $0 == colon || $0 == UInt8(ascii: ".") }
        }
        return bytes.allSatisfy { byte in
            isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "*")
        }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || ((byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "f"))
    }
}
