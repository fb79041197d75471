/// Base64url (RFC 4648 §5) without padding: the alphabet of OAuth.io keys, secrets and codes.
public enum Base64URL {
    @usableFromInline
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes bytes without `=` padding.
    @inlinable
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let b0 = iterator.next() {
            let b1 = iterator.next()
            let b2 = iterator.next()
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | (b1 ?? 0) >> 4)])
            if let b1 {
                out.append(alphabet[Int((b1 & 0x0F) << 2 | (b2 ?? 0) >> 6)])
            }
            if let b2 {
                out.append(alphabet[Int(b2 & 0x3F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes unpadded base64url. Returns nil for any character outside the alphabet, an
    /// impossible length, or non-zero trailing bits: a lenient decoder would let two
    /// different strings stand for the same bytes.
    @inlinable
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            guard let value = sextet(byte) else { return nil }
            values.append(value)
        }
        if values.count % 4 == 1 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index + 4 <= values.count {
            let (a, b, c, d) = (values[index], values[index + 1], values[index + 2], values[index + 3])
            out.append(a << 2 | b >> 4)
            out.append(b << 4 | c >> 2)
            out.append(c << 6 | d)
            index += 4
        }
        let rest = values.count - index
        if rest == 2 {
            let (a, b) = (values[index], values[index + 1])
            guard b & 0x0F == 0 else { return nil }
            out.append(a << 2 | b >> 4)
        } else if rest == 3 {
            let (a, b, c) = (values[index], values[index + 1], values[index + 2])
            guard c & 0x03 == 0 else { return nil }
            out.append(a << 2 | b >> 4)
            out.append(b << 4 | c >> 2)
        }
        return out
    }

    @usableFromInline
    static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}

/// Standard base64 (RFC 4648 §4, with padding), as operators write the master key.
public enum Base64 {
    /// Encodes bytes with `+`, `/` and `=` padding.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        var out = Array(Base64URL.encode(bytes).utf8)
        for index in out.indices {
            if out[index] == UInt8(ascii: "-") { out[index] = UInt8(ascii: "+") }
            else if out[index] == UInt8(ascii: "_") { out[index] = UInt8(ascii: "/") }
        }
        while out.count % 4 != 0 { out.append(UInt8(ascii: "=")) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes padded or unpadded standard base64; nil for anything malformed.
    public static func decode(_ text: String) -> [UInt8]? {
        var body = Array(text.utf8)
        var padding = 0
        while body.last == UInt8(ascii: "="), padding < 2 {
            body.removeLast()
            padding += 1
        }
        if padding > 0, text.utf8.count % 4 != 0 { return nil }
        for index in body.indices {
            switch body[index] {
            case UInt8(ascii: "-"), UInt8(ascii: "_"): return nil
            case UInt8(ascii: "+"): body[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): body[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return Base64URL.decode(String(decoding: body, as: UTF8.self))
    }
}
