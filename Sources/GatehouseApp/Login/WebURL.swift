internal import GatehouseCore

/// Just enough URL parsing for origin and whitelist checks: scheme, host, port, path.
/// Anything with characters a browser would not send, or with credentials in it, is refused.
struct WebURL: Sendable, Hashable {
    let scheme: String
    let host: String
    let port: Int?
    let path: String

    /// Parses `scheme://host[:port][/path][?query][#fragment]`. With `assumeHTTP`, text without
    /// a scheme is read as `http://` (oauthd's rule for whitelist entries and `d`).
    init?(_ text: String, assumeHTTP: Bool = false) {
        var rest = Substring(text)
        // oauthd's fixUrl: some clients send `https:/host`.
        if let colon = rest.firstIndex(of: ":"), rest[rest.index(after: colon)...].hasPrefix("/"),
            !rest[rest.index(after: colon)...].hasPrefix("//")
        {
            rest = rest[...colon] + "/" + rest[rest.index(after: colon)...]
        }
        if let separator = Self.schemeSeparator(in: rest) {
            let scheme = rest[..<separator.lowerBound].lowercased()
            guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }),
                scheme.first?.isLetter == true
            else { return nil }
            self.scheme = scheme
            rest = rest[separator.upperBound...]
        } else if assumeHTTP {
            scheme = "http"
        } else {
            return nil
        }
        guard rest.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && $0 != "\\" }) else { return nil }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.containsBytes("@") else { return nil }
        var hostPart = authority
        var port: Int?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            hostPart = authority[...close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                guard let value = Int(after.dropFirst()), (1...65535).contains(value) else { return nil }
                port = value
            } else if !after.isEmpty {
                return nil
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            let portText = authority[authority.index(after: colon)...]
            if !portText.isEmpty {
                guard portText.allSatisfy(\.isNumber), let value = Int(portText), (1...65535).contains(value) else { return nil }
                port = value
            }
        }
        guard !hostPart.isEmpty else { return nil }
        host = hostPart.lowercased()
        self.port = port
        let pathEnd = rest[authorityEnd...].firstIndex { $0 == "?" || $0 == "#" } ?? rest.endIndex
        path = String(rest[authorityEnd..<pathEnd])
    }

    /// The range of the first `://`, found by a byte scan (the proxy parses URLs per call).
    private static func schemeSeparator(in text: Substring) -> Range<Substring.Index>? {
        let bytes = text.utf8
        var index = bytes.startIndex
        while index != bytes.endIndex {
            if bytes[index] == UInt8(ascii: ":") {
                let slash1 = bytes.index(after: index)
                if slash1 != bytes.endIndex, bytes[slash1] == UInt8(ascii: "/") {
                    let slash2 = bytes.index(after: slash1)
                    if slash2 != bytes.endIndex, bytes[slash2] == UInt8(ascii: "/") {
                        return index..<bytes.index(after: slash2)
                    }
                }
            }
            index = bytes.index(after: index)
        }
        return nil
    }

    /// `scheme://host[:port]`, the form `postMessage` targets and browsers send as Origin.
    var origin: String {
        "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "")
    }

    /// True for schemes a redirect may go to: web pages and app-registered custom schemes,
    /// never script or data URLs.
    var isSafeRedirectTarget: Bool {
        !["javascript", "data", "vbscript", "file", "blob", "about"].contains(scheme)
    }
}
