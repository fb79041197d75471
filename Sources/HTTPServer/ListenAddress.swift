/// Where the server listens: an IPv4 literal, a bracketed IPv6 literal or `localhost`, and
/// a port (0 lets the kernel choose, which tests use).
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    public enum Family: Sendable, Hashable {
        case ipv4, ipv6
    }

    /// The numeric host, without brackets.
    public let host: String
    public let port: UInt16
    public let family: Family

    /// Parses `HOST:PORT`; nil with no explanation needed beyond "expected host:port".
    public init?(_ text: String) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let afterBracket = text[text.index(after: close)...]
            guard afterBracket.hasPrefix(":") else { return nil }
            portPart = afterBracket.dropFirst()
            guard Self.isIPv6(hostPart) else { return nil }
            family = .ipv6
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            if hostPart == "localhost" {
                family = .ipv4
            } else {
                guard Self.isIPv4(hostPart) else { return nil }
                family = .ipv4
            }
        }
        guard !portPart.isEmpty, portPart.allSatisfy(\.isASCII), portPart.allSatisfy(\.isNumber),
            portPart.count <= 5, let port = UInt16(portPart)
        else { return nil }
        self.host = hostPart == "localhost" ? "127.0.0.1" : String(hostPart)
        self.port = port
    }

    public init(host: String, port: UInt16, family: Family) {
        self.host = host
        self.port = port
        self.family = family
    }

    public var description: String {
        family == .ipv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private static func isIPv4(_ text: Substring) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        return parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy { $0.isASCII && $0.isNumber } && (Int(part) ?? 256) <= 255
        }
    }

    private static func isIPv6(_ text: Substring) -> Bool {
        !text.isEmpty && text.contains(":") && text.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
    }
}
