/// A strict RFC 8259 parser from UTF-8 bytes to `JSONValue`: token headers and payloads,
/// request bodies, stored login records.
///
/// These are parsed on every login, so this avoids `JSONDecoder`, whose `JSONValue` decoding
/// tries each type in turn and throws on every miss. It is also stricter than Foundation
/// where signed data calls for it: duplicate member names, compared byte for byte, are
/// refused (two parsers could pick different `alg` or `iss` values), as are invalid UTF-8,
/// lone surrogates, control characters in strings, trailing content and nesting deeper than
/// `maximumDepth`.
enum JSONParser {
    static let maximumDepth = 32

    /// The value `bytes` hold, or nil if they are not exactly one valid JSON text.
    static func parse(_ bytes: [UInt8]) -> JSONValue? {
        bytes.withUnsafeBufferPointer { buffer in
            var parser = Parser(bytes: buffer)
            guard let value = parser.value(depth: 0) else { return nil }
            parser.skipWhitespace()
            // Not `? value : nil`: JSONValue is ExpressibleByNilLiteral, so that `nil` would be
            // JSON null, and trailing content would parse as null instead of failing.
            guard parser.index == buffer.count else { return nil }
            return value
        }
    }

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        /// Members of the objects still open, innermost last.
        var pending: [JSONObject.Member] = []

        private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func value(depth: Int) -> JSONValue? {
            skipWhitespace()
            switch current {
            case UInt8(ascii: "{"): return object(depth: depth + 1)
            case UInt8(ascii: "["): return array(depth: depth + 1)
            case UInt8(ascii: "\""): return string().map(JSONValue.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            case .some: return number()
            case nil: return nil
            }
        }

        private mutating func object(depth: Int) -> JSONValue? {
            guard depth <= JSONParser.maximumDepth else { return nil }
            index += 1
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                index += 1
                return .object([:])
            }
            // Members wait on the shared stack until the object closes, so its storage is
            // allocated once, not grown member by member.
            if pending.capacity == 0 { pending.reserveCapacity(16) }
            let first = pending.count
            defer { pending.removeSubrange(first...) }
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\""), let name = string() else { return nil }
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { return nil }
                index += 1
                guard let member = value(depth: depth) else { return nil }
                pending.append(JSONObject.Member(key: name, value: member))
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"):
                    index += 1
                    // An object with nothing open around it takes the stack itself: a copy of
                    // the whole stack would share its storage, and emptying the stack would
                    // then copy it again.
                    let members: [JSONObject.Member]
                    if first == 0 {
                        members = pending
                        pending = []
                    } else {
                        members = Array(pending[first...])
                    }
                    return JSONObject(uniqueMembers: members).map(JSONValue.object)
                default: return nil
                }
            }
        }

        private mutating func array(depth: Int) -> JSONValue? {
            guard depth <= JSONParser.maximumDepth else { return nil }
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                guard let element = value(depth: depth) else { return nil }
                elements.append(element)
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"):
                    index += 1
                    return .array(elements)
                default: return nil
                }
            }
        }

        private mutating func literal(_ word: StaticString, _ result: JSONValue) -> JSONValue? {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { return nil }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return nil }
            index += count
            return result
        }

        /// A string starting at the opening quote. Strings without escapes, nearly all of them
        /// in tokens, are validated and copied in one step.
        mutating func string() -> String? {
            index += 1
            let start = index
            var highBits = ByteScan.skipPlainString(bytes, from: &index)
            while let byte = current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                guard byte >= 0x20 else { return nil }
                highBits |= byte
                index += 1
            }
            guard let stop = current else { return nil }
            let plain = UnsafeBufferPointer(rebasing: bytes[start..<index])
            if stop == UInt8(ascii: "\"") {
                index += 1
                // ASCII needs no validation; the generic validating initialiser is not
                // specialised here and looks up type metadata on every call.
                return highBits < 0x80 ? String(decoding: plain, as: UTF8.self) : String(validating: plain, as: UTF8.self)
            }
            var utf8 = Array(plain)
            guard unescape(into: &utf8) else { return nil }
            index += 1
            return String(validating: utf8, as: UTF8.self)
        }

        /// Continues a string at its first backslash, appending decoded bytes up to the closing quote.
        private mutating func unescape(into utf8: inout [UInt8]) -> Bool {
            while let byte = current, byte != UInt8(ascii: "\"") {
                guard byte >= 0x20 else { return false }
                guard byte == UInt8(ascii: "\\") else {
                    utf8.append(byte)
                    index += 1
                    continue
                }
                index += 1
                guard let escaped = current else { return false }
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = unicodeEscape() else { return false }
                    UTF8.encode(scalar) { utf8.append($0) }
                default: return false
                }
            }
            return current == UInt8(ascii: "\"")
        }

        /// The scalar of a `\uXXXX` escape (the `\u` already consumed), joining surrogate pairs.
        private mutating func unicodeEscape() -> Unicode.Scalar? {
            guard let high = hexQuad() else { return nil }
            switch high {
            case 0xD800...0xDBFF:
                guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return nil }
                index += 2
                guard let low = hexQuad(), (0xDC00...0xDFFF).contains(low) else { return nil }
                return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
            case 0xDC00...0xDFFF:
                return nil
            default:
                return Unicode.Scalar(high)
            }
        }

        private mutating func hexQuad() -> UInt32? {
            guard bytes.count - index >= 4 else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, checked here because
        /// `Double(_:)` also takes forms JSON forbids (`+1`, `.5`, `inf`, hex).
        private mutating func number() -> JSONValue? {
            let start = index
            if current == UInt8(ascii: "-") { index += 1 }
            if current == UInt8(ascii: "0") {
                index += 1
            } else {
                guard digits() > 0 else { return nil }
            }
            var isInteger = true
            if current == UInt8(ascii: ".") {
                isInteger = false
                index += 1
                guard digits() > 0 else { return nil }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                isInteger = false
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { return nil }
            }
            // Integers that a Double holds exactly (timestamps, counts) skip strtod.
            if isInteger, index - start <= 15 {
                var value: Int64 = 0
                for offset in start..<index where bytes[offset] != UInt8(ascii: "-") {
                    value = value * 10 + Int64(bytes[offset] - UInt8(ascii: "0"))
                }
                return .number(Double(bytes[start] == UInt8(ascii: "-") ? -value : value))
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            guard let value = Double(text), value.isFinite else { return nil }
            return .number(value)
        }

        private mutating func digits() -> Int {
            let start = index
            while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
            return index - start
        }
    }
}
