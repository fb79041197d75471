/// Quotes a string as a JSON string literal. The text may end up inside HTML: `<`, `>`, `&`,
/// U+2028 and U+2029 are escaped too, so a quoted value can never close a `<script>` element.
public enum JSONString {
    public static func quote(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        append(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `text` quoted to `out`, working on UTF-8 bytes: this runs for every string of
    /// every JSON response and log line.
    public static func append(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var index = 0
            while index < bytes.count {
                // Copy the run of bytes that need no escape in one go: nearly all of them.
                var end = index
                ByteScan.skipQuotable(bytes, from: &end)
                while end < bytes.count, !needsAttention(bytes[end]) { end += 1 }
                if end > index {
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<end]))
                    index = end
                    if index == bytes.count { break }
                }
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""): out += [0x5C, 0x22]
                case UInt8(ascii: "\\"): out += [0x5C, 0x5C]
                case 0x0A: out += [0x5C, UInt8(ascii: "n")]
                case 0x0D: out += [0x5C, UInt8(ascii: "r")]
                case 0x09: out += [0x5C, UInt8(ascii: "t")]
                case UInt8(ascii: "<"): out += Array("\\u003c".utf8)
                case UInt8(ascii: ">"): out += Array("\\u003e".utf8)
                case UInt8(ascii: "&"): out += Array("\\u0026".utf8)
                case 0xE2 where index + 2 < bytes.count && bytes[index + 1] == 0x80 && (bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9):
                    // U+2028 and U+2029 end a JavaScript line even inside a string literal.
                    out += Array((bytes[index + 2] == 0xA8 ? "\\u2028" : "\\u2029").utf8)
                    index += 2
                case 0x00..<0x20:
                    out += [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
                default:
                    out.append(byte)
                }
                index += 1
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// Bytes the switch above must look at: controls, `"`, `\\`, `<`, `>`, `&`, and 0xE2,
    /// the lead byte of U+2028/U+2029.
    @inline(__always)
    private static func needsAttention(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x00..<0x20, UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"), 0xE2: true
        default: false
        }
    }
}
