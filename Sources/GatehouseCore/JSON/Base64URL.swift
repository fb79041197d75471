/// Base64url (RFC 4648 §5) without padding: the alphabet of OAuth.io keys, secrets and codes.
public enum Base64URL {
    @usableFromInline
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes bytes without `=` padding, straight into the string's storage: an identifier
    /// is encoded several times per login, and a byte array first cost an allocation and a
    /// copy each time.
    @inlinable
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        String(unsafeUninitializedCapacity: (bytes.count * 4 + 2) / 3) { out in
            var at = 0
            func put(_ sextet: UInt8) {
                out[at] = alphabet[Int(sextet)]
                at += 1
            }
            var iterator = bytes.makeIterator()
            while let b0 = iterator.next() {
                let b1 = iterator.next()
                let b2 = iterator.next()
                put(b0 >> 2)
                put((b0 & 0x03) << 4 | (b1 ?? 0) >> 4)
                if let b1 { put((b1 & 0x0F) << 2 | (b2 ?? 0) >> 6) }
                if let b2 { put(b2 & 0x3F) }
            }
            return at
        }
    }

    /// Decodes unpadded base64url. Returns nil for any character outside the alphabet, an
    /// impossible length, or non-zero trailing bits: a lenient decoder would let two
    /// different strings stand for the same bytes.
    @inlinable
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        // One pass over contiguous UTF-8 with a lookup table: every JWS is decoded three
        // times per verification, and a generic walk over `utf8` cost more than the RSA check.
        text.withUTF8InPlace { decode(bytes: $0) }
    }

    /// The same over UTF-8 bytes already in hand (the parts of a compact JWS).
    public static func decode(bytes: ArraySlice<UInt8>) -> [UInt8]? {
        bytes.withUnsafeBufferPointer { decode(bytes: $0) }
    }

    @usableFromInline
    static func decode(bytes input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let count = input.count
        if count % 4 == 1 { return nil }
        let size = count / 4 * 3 + max(0, count % 4 - 1)
        var valid = true
        // Written straight into the result's storage: appending byte by byte checked the
        // capacity three times per quantum.
        let out = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialised in
            initialised = 0
            decodingTable.withUnsafeBufferPointer { table in
                var index = 0
                var at = 0
                while index + 4 <= count {
                    let a = table[Int(input[index])], b = table[Int(input[index + 1])]
                    let c = table[Int(input[index + 2])], d = table[Int(input[index + 3])]
                    guard (a | b | c | d) & 0xC0 == 0 else { return valid = false }
                    buffer[at] = a << 2 | b >> 4
                    buffer[at + 1] = b << 4 | c >> 2
                    buffer[at + 2] = c << 6 | d
                    index += 4
                    at += 3
                }
                switch count - index {
                case 2:
                    let a = table[Int(input[index])], b = table[Int(input[index + 1])]
                    guard (a | b) & 0xC0 == 0, b & 0x0F == 0 else { return valid = false }
                    buffer[at] = a << 2 | b >> 4
                case 3:
                    let a = table[Int(input[index])], b = table[Int(input[index + 1])], c = table[Int(input[index + 2])]
                    guard (a | b | c) & 0xC0 == 0, c & 0x03 == 0 else { return valid = false }
                    buffer[at] = a << 2 | b >> 4
                    buffer[at + 1] = b << 4 | c >> 2
                default:
                    break
                }
            }
            // UInt8 needs no deinitialisation, so a rejected input may leave bytes unwritten.
            if valid { initialised = size }
        }
        return valid ? out : nil
    }

    /// Each byte's sextet, or 0xFF for a byte outside the alphabet.
    private static let decodingTable: [UInt8] = (0...255).map { sextet(UInt8($0)) ?? 0xFF }

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
