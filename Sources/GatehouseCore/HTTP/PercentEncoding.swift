/// Percent-encoding as URLs and `application/x-www-form-urlencoded` bodies use it.
public enum PercentEncoding {
    /// Decodes `%XX` escapes (and `+` as a space when `plusAsSpace`). Returns nil for a broken
    /// escape or bytes that are not UTF-8, so malformed input becomes a 400, not a guess.
    public static func decode(_ text: some StringProtocol, plusAsSpace: Bool = false) -> String? {
        let utf8 = Array(text.utf8)
        guard utf8.contains(UInt8(ascii: "%")) || (plusAsSpace && utf8.contains(UInt8(ascii: "+"))) else {
            return String(text)
        }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < utf8.count, let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2])
                else { return nil }
                out.append(high << 4 | low)
                index += 3
            } else if plusAsSpace, byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
                index += 1
            } else {
                out.append(byte)
                index += 1
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    /// Encodes everything except RFC 3986 unreserved characters, which is what both OAuth 1.0a
    /// signatures and JavaScript's `encodeURIComponent` consumers accept.
    public static func encode(_ text: some StringProtocol) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        let digits = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(Unicode.Scalar(digits[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(digits[Int(byte & 0x0F)]))
            }
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// One `name=value` pair of a query string or form body, in arrival order.
public struct FormField: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Parses `a=1&b=2` (form or query syntax). Returns nil if any escape is malformed.
    public static func parse(_ text: some StringProtocol) -> [FormField]? {
        var fields: [FormField] = []
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = PercentEncoding.decode(parts[0], plusAsSpace: true) else { return nil }
            let rawValue = parts.count > 1 ? parts[1] : ""
            guard let value = PercentEncoding.decode(rawValue, plusAsSpace: true) else { return nil }
            fields.append(FormField(name: name, value: value))
        }
        return fields
    }
}
