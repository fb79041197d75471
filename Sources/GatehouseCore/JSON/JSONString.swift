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
        var text = text
        text.withUTF8 { append(utf8: $0, to: &out) }
    }

    /// Appends UTF-8 `bytes` quoted to `out`: text that is already bytes (a serialised JSON
    /// document placed in a page) needs no String first.
    public static func append(utf8 bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
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
            // Appended piece by piece: an array literal here would be a heap allocation per escape.
            switch byte {
            case UInt8(ascii: "\""): appendEscape(UInt8(ascii: "\""), to: &out)
            case UInt8(ascii: "\\"): appendEscape(UInt8(ascii: "\\"), to: &out)
            case 0x0A: appendEscape(UInt8(ascii: "n"), to: &out)
            case 0x0D: appendEscape(UInt8(ascii: "r"), to: &out)
            case 0x09: appendEscape(UInt8(ascii: "t"), to: &out)
            case 0xE2 where index + 2 < bytes.count && bytes[index + 1] == 0x80 && (bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9):
                // U+2028 and U+2029 end a JavaScript line even inside a string literal.
                appendUnicodeEscape(bytes[index + 2] == 0xA8 ? 0x2028 : 0x2029, to: &out)
                index += 2
            case 0x00..<0x20, UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"):
                appendUnicodeEscape(UInt16(byte), to: &out)
            default:
                out.append(byte)
            }
            index += 1
        }
        out.append(UInt8(ascii: "\""))
    }

    @inline(__always)
    private static func appendEscape(_ letter: UInt8, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\\"))
        out.append(letter)
    }

    /// `\uXXXX`, lowercase hex.
    private static func appendUnicodeEscape(_ unit: UInt16, to out: inout [UInt8]) {
        appendEscape(UInt8(ascii: "u"), to: &out)
        for shift in stride(from: 12, through: 0, by: -4) {
            let digit = UInt8(truncatingIfNeeded: unit >> UInt16(shift)) & 0x0F
            out.append(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
        }
    }

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
