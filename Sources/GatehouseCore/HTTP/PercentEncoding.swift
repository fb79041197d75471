/// Percent-encoding as URLs and `application/x-www-form-urlencoded` bodies use it.
public enum PercentEncoding {
    /// Decodes `%XX` escapes (and `+` as a space when `plusAsSpace`). Returns nil for a broken
    /// escape or bytes that are not UTF-8, so malformed input becomes a 400, not a guess.
    ///
    /// Inlinable so that callers in other modules reach the byte-level work without walking
    /// `utf8` through unspecialised generic witnesses, one call per byte.
    @inlinable
    public static func decode(_ text: some StringProtocol, plusAsSpace: Bool = false) -> String? {
        text.withUTF8InPlace { decode(utf8: $0, plusAsSpace: plusAsSpace) }
    }

    /// The same over UTF-8 bytes anywhere in memory (a C string's, say), without a String first.
    public static func decode(utf8: UnsafeBufferPointer<UInt8>, plusAsSpace: Bool) -> String? {
        guard utf8.contains(UInt8(ascii: "%")) || (plusAsSpace && utf8.contains(UInt8(ascii: "+"))) else {
            return String(decoding: utf8, as: UTF8.self)
        }
        return unescaped(utf8, plusAsSpace: plusAsSpace)
    }

    /// The same over bytes: query strings and form bodies are parsed without building a
    /// String per piece first.
    public static func decode(bytes utf8: ArraySlice<UInt8>, plusAsSpace: Bool) -> String? {
        // Most fields have nothing to decode: ASCII without `%` (or `+`) is its own decoding
        // and valid UTF-8, so it needs neither the copy nor the validation below.
        let isPlain = !utf8.contains { byte in
            byte == UInt8(ascii: "%") || byte >= 0x80 || (plusAsSpace && byte == UInt8(ascii: "+"))
        }
        if isPlain { return String(decoding: utf8, as: UTF8.self) }
        return utf8.withUnsafeBufferPointer { unescaped($0, plusAsSpace: plusAsSpace) }
    }

    /// Escapes (and `+`) decoded straight from the bytes in place; nil for a broken escape or
    /// a result that is not UTF-8.
    private static func unescaped(_ utf8: UnsafeBufferPointer<UInt8>, plusAsSpace: Bool) -> String? {
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
    @inlinable
    public static func encode(_ text: some StringProtocol) -> String {
        text.withUTF8InPlace { encode(utf8: $0) }
    }

    @usableFromInline
    static func encode(utf8: UnsafeBufferPointer<UInt8>) -> String {
        // Most values (ids, tokens, codes) need no escape at all.
        guard utf8.contains(where: { !isUnreserved($0) }) else { return String(decoding: utf8, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count + 16)
        append(utf8: utf8, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `name=value&…`, names and values encoded as `encode` does: a query string or a form body,
    /// built in one buffer rather than from a string per pair.
    /// Inlinable so each caller's sequence type is iterated directly, not through witness tables.
    @inlinable
    public static func formEncoded(_ pairs: some Sequence<(String, String)>) -> String {
        String(decoding: formEncodedBytes(pairs), as: UTF8.self)
    }

    /// `formEncoded` as the bytes of a request body, with no string made on the way.
    @inlinable
    public static func formEncodedBytes(_ pairs: some Sequence<(String, String)>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        var first = true
        for (name, value) in pairs {
            if !first { out.append(UInt8(ascii: "&")) }
            first = false
            append(name, to: &out)
            out.append(UInt8(ascii: "="))
            append(value, to: &out)
        }
        return out
    }

    @usableFromInline
    static func append(_ text: String, to out: inout [UInt8]) {
        text.withUTF8InPlace { append(utf8: $0, to: &out) }
    }

    /// Copies each run of unreserved bytes in one go (values are mostly such runs) and
    /// escapes the bytes between them.
    private static func append(utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var runStart = 0
        for index in 0..<utf8.count where !isUnreserved(utf8[index]) {
            if index > runStart { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
            let byte = utf8[index]
            out.append(UInt8(ascii: "%"))
            out.append(hexDigit(byte >> 4))
            out.append(hexDigit(byte & 0x0F))
            runStart = index + 1
        }
        if runStart < utf8.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
    }

    @inline(__always)
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
    }

    @inline(__always)
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
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
    @inlinable
    public static func parse(_ text: some StringProtocol) -> [FormField]? {
        parse(Array(text.utf8), keepingMalformed: false)
    }

    /// `parse` over bytes as they arrived, such as a form body: no String made first.
    public static func parse(bytes: [UInt8]) -> [FormField]? {
        parse(bytes, keepingMalformed: false)
    }

    /// Like `parse`, but a name or value whose escapes are malformed is kept as sent instead
    /// of failing the whole text: senders that do not encode at all (the iOS SDK's `oauthio`
    /// header) may leave a stray `%` in a value.
    @inlinable
    public static func parseKeepingMalformed(_ text: some StringProtocol) -> [FormField] {
        parse(Array(text.utf8), keepingMalformed: true) ?? []
    }

    @usableFromInline
    static func parse(_ bytes: [UInt8], keepingMalformed: Bool) -> [FormField]? {
        func decode(_ piece: ArraySlice<UInt8>) -> String? {
            PercentEncoding.decode(bytes: piece, plusAsSpace: true)
                ?? (keepingMalformed ? String(decoding: piece, as: UTF8.self) : nil)
        }
        var fields: [FormField] = []
        var start = 0
        while start <= bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.count
            if end > start {
                let pair = bytes[start..<end]
                let equals = pair.firstIndex(of: UInt8(ascii: "="))
                guard let name = decode(pair[..<(equals ?? end)]), let value = decode(equals.map { pair[($0 + 1)...] } ?? [])
                else { return nil }
                fields.append(FormField(name: name, value: value))
            }
            start = end + 1
        }
        return fields
    }
}
