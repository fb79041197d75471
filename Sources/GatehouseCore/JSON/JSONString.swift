/// Quotes a string as a JSON string literal. The text may end up inside HTML: `<`, `>`, `&`,
/// U+2028 and U+2029 are escaped too, so a quoted value can never close a `<script>` element.
public enum JSONString {
    public static func quote(_ text: String) -> String {
        var out = JSONOutput(capacity: text.utf8.count + 2)
        append(text, to: &out)
        return out.string()
    }

    /// Appends `text` quoted to `out`, for callers assembling bytes of their own (a popup
    /// page's script, a carrier's request body).
    public static func append(_ text: String, to out: inout [UInt8]) {
        text.withUTF8InPlace { append(utf8: $0, to: &out) }
    }

    /// Appends UTF-8 `bytes` quoted to `out`: text that is already bytes (a serialised JSON
    /// document placed in a page) needs no String first.
    public static func append(utf8 bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var quoted = JSONOutput(capacity: bytes.count + 2)
        append(utf8: bytes, to: &quoted)
        quoted.append(to: &out)
    }

    /// The writer's own path, for every string of every JSON response and log line: working on
    /// UTF-8 bytes, straight into the buffer.
    static func append(_ text: String, to out: inout JSONOutput) {
        text.withUTF8InPlace { append(utf8: $0, to: &out) }
    }

    static func append(utf8 bytes: UnsafeBufferPointer<UInt8>, to out: inout JSONOutput) {
        // Room for the text as it is and both quotes; an escape first makes room for itself and
        // the rest, so every write below is a plain store.
        out.reserve(bytes.count + 2)
        out.appendReserved(UInt8(ascii: "\""))
        var index = 0
        while index < bytes.count {
            // Copy the run of bytes that need no escape in one go: nearly all of them.
            let end = ByteScan.quotingStop(bytes, from: index)
            if end > index {
                out.appendReserved(UnsafeBufferPointer(rebasing: bytes[index..<end]))
                index = end
                if index == bytes.count { break }
            }
            // At most six bytes out for the one to three read, and the closing quote.
            out.reserve(bytes.count - index + 7)
            let byte = bytes[index]
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
                out.appendReserved(byte)
            }
            index += 1
        }
        out.appendReserved(UInt8(ascii: "\""))
    }

    @inline(__always)
    private static func appendEscape(_ letter: UInt8, to out: inout JSONOutput) {
        out.appendReserved(UInt8(ascii: "\\"))
        out.appendReserved(letter)
    }

    /// `\uXXXX`, lowercase hex.
    private static func appendUnicodeEscape(_ unit: UInt16, to out: inout JSONOutput) {
        appendEscape(UInt8(ascii: "u"), to: &out)
        for shift in stride(from: 12, through: 0, by: -4) {
            let digit = UInt8(truncatingIfNeeded: unit >> UInt16(shift)) & 0x0F
            out.appendReserved(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
        }
    }
}
