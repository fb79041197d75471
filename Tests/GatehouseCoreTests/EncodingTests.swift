import Foundation
import GatehouseCore
import GatehouseTestSupport
import Testing

@Suite("Encodings")
struct EncodingTests {
    @Test("base64url round-trips every length and refuses non-canonical text")
    func base64URL() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("="))
            #expect(Base64URL.decode(text) == bytes)
            // Against an independent encoder: Foundation's, in the url alphabet, unpadded.
            let reference = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(text == reference, "length \(length)")
        }
        #expect(Base64URL.encode(Array("hello".utf8)) == "aGVsbG8")
        #expect(Base64URL.decode("aGVsbG9") == nil, "trailing bits set: another spelling of the same bytes")
        #expect(Base64URL.decode("a") == nil)
        #expect(Base64URL.decode("ab+c") == nil)
        #expect(Base64URL.decode("ab=c") == nil)
    }

    @Test("standard base64 accepts padding and refuses the url alphabet")
    func base64Standard() {
        let key = [UInt8](repeating: 0xFB, count: 32)
        let text = Base64.encode(key)
        #expect(text.hasSuffix("="))
        #expect(Base64.decode(text) == key)
        #expect(Base64.decode(String(text.dropLast())) == key)
        #expect(Base64.decode("-_-_") == nil)
        #expect(Base64.decode("aGVsbG8=") == Array("hello".utf8))
    }

    @Test("percent-decoding handles plus, escapes and rejects broken input")
    func percent() {
        #expect(PercentEncoding.decode("a%20b") == "a b")
        #expect(PercentEncoding.decode("a+b") == "a+b")
        #expect(PercentEncoding.decode("a+b", plusAsSpace: true) == "a b")
        #expect(PercentEncoding.decode("%E2%9C%93") == "✓")
        #expect(PercentEncoding.decode("%zz") == nil)
        #expect(PercentEncoding.decode("%4") == nil)
        #expect(PercentEncoding.decode("%ff%fe") == nil, "not UTF-8")
        #expect(PercentEncoding.encode("a b/ç~") == "a%20b%2F%C3%A7~")
        #expect(PercentEncoding.formEncoded([("a b", "x&y=z"), ("", ""), ("ç", "~.-_")]) == "a%20b=x%26y%3Dz&=&%C3%A7=~.-_")
        #expect(PercentEncoding.formEncoded([(String, String)]()) == "")
        // Over raw bytes (paths, queries, forms): plain ASCII comes back as is, anything else
        // is still decoded and validated.
        func bytes(_ raw: [UInt8], plus: Bool = false) -> String? { PercentEncoding.decode(bytes: raw[...], plusAsSpace: plus) }
        #expect(bytes(Array("apple.native-1_~".utf8)) == "apple.native-1_~")
        #expect(bytes(Array("a+b".utf8)) == "a+b")
        #expect(bytes(Array("a+b".utf8), plus: true) == "a b")
        #expect(bytes(Array("é%41".utf8)) == "éA")
        #expect(bytes([0x61, 0xC3]) == nil, "a truncated UTF-8 sequence")
        #expect(bytes([0xFF]) == nil, "not UTF-8")
        #expect(bytes([]) == "")
    }

    @Test("ASCII case-insensitive equality folds letters only")
    func asciiCase() {
        #expect("Content-Type".equalsIgnoringASCIICase("content-type"))
        #expect("X-REQUEST-ID".equalsIgnoringASCIICase("x-request-id"))
        #expect("".equalsIgnoringASCIICase(""))
        #expect(!"accept".equalsIgnoringASCIICase("accepts"))
        // Bytes 0x20 apart that are not letters stay distinct.
        #expect(!"a[".equalsIgnoringASCIICase("a{"))
        #expect(!"@".equalsIgnoringASCIICase("`"))
        #expect(!"é".equalsIgnoringASCIICase("É"), "ASCII only")
    }

    @Test("form fields keep order, empty values and repeated names")
    func form() throws {
        let fields = try #require(FormField.parse("a=1&b=&a=2&c&d=x+y%2B"))
        #expect(fields.map(\.name) == ["a", "b", "a", "c", "d"])
        #expect(fields.map(\.value) == ["1", "", "2", "", "x y+"])
        #expect(FormField.parse("a=%") == nil)
        #expect(FormField.parse("&&x=%3D%26&&")?.map(\.value) == ["=&"], "empty pairs skipped, escapes decoded after splitting")
        #expect(FormField.parse("k==v")?.first?.value == "=v", "only the first = separates")
        #expect(FormField.parse("")?.isEmpty == true)
        #expect(PercentEncoding.encode("plain-Token_1.2~") == "plain-Token_1.2~")
    }

    @Test("JSON string quoting is safe inside a script element")
    func jsonString() {
        let quoted = JSONString.quote("</script><b>\"&\u{2028}\n\u{01}")
        #expect(!quoted.contains("<"))
        #expect(!quoted.contains(">"))
        #expect(quoted == #""\u003c/script\u003e\u003cb\u003e\"\u0026\u2028\n\u0001""#)
    }

    @Test("JSON values round-trip and integers stay integers")
    func jsonValue() throws {
        let value: JSONValue = ["a": 1, "b": [true, nil, "x"], "c": .number(1.5)]
        let bytes = try JSONCoding.encode(value)
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"a":1,"b":[true,null,"x"],"c":1.5}"#)
        #expect(try JSONCoding.decode(JSONValue.self, from: bytes) == value)
    }

    @Test("object members are written in code point order, whatever their length or script")
    func jsonKeyOrder() {
        // Short keys are stored inline and long ones on the heap; the order must not care.
        let value: JSONValue = [
            "é": 1, "z": 2, "Z": 3, "real_user_status": 4, "real_user": 5, "a_key_longer_than_fifteen_bytes": 6, "": 7, "\u{2603}": 8,
        ]
        #expect(value.jsonText == #"{"":7,"Z":3,"a_key_longer_than_fifteen_bytes":6,"real_user":5,"real_user_status":4,"z":2,"é":1,"☃":8}"#)
    }

    @Test("the parser reads integers exactly, other numbers as doubles, and non-ASCII strings validated")
    func jsonParserNumbersAndStrings() {
        let cases: [(String, Double)] = [
            ("0", 0), ("-0", 0), ("-5", -5), ("1796037151", 1_796_037_151), ("999999999999999", 999_999_999_999_999),
            ("-99999999999999", -99_999_999_999_999), ("1234567890123456", 1_234_567_890_123_456), ("1e3", 1000), ("0.5", 0.5),
            ("-2.5E-1", -0.25),
        ]
        for (text, expected) in cases {
            #expect(JSONValue.parse(text) == .number(expected), "\(text)")
        }
        for bad in ["01", "-", "1.", ".5", "+1", "1e", "--1"] {
            #expect(JSONValue.parse(bad) == Optional<JSONValue>.none, "\(bad) gave \(String(describing: JSONValue.parse(bad)))")
        }
        #expect(JSONValue.parse(#""caf\#u{E9} \#u{2603}""#) == .string("caf\u{E9} \u{2603}"))
        #expect(JSONValue.parse([0x22, 0xC3, 0x28, 0x22]) == Optional<JSONValue>.none)
        #expect(JSONValue.object(["n": -42, "m": 7, "big": .number(1e20)]).jsonText == #"{"big":1e+20,"m":7,"n":-42}"#)
    }

    @Test("quoting and parsing find every special byte at every offset of a long run")
    func jsonStridesAtEveryOffset() {
        // The scans stride sixteen bytes at a time; a special byte must stop them wherever it falls,
        // in the first stride, a later one, or the tail after the last.
        let specials: [(String, String)] = [
            ("\"", #"\""#), ("\\", #"\\"#), ("\n", #"\n"#), ("\u{01}", #"\u0001"#), ("<", #"\u003c"#), (">", #"\u003e"#),
            ("&", #"\u0026"#), ("\u{2028}", #"\u2028"#), ("\u{2029}", #"\u2029"#), ("\u{E9}", "\u{E9}"), ("\u{7F}", "\u{7F}"),
            ("\r", #"\r"#), ("\t", #"\t"#), ("\u{1F}", #"\u001f"#), ("\u{0B}", #"\u000b"#),
        ]
        for length in [1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 47] {
            for offset in 0..<length {
                for (special, escaped) in specials {
                    let plain = String(repeating: "a", count: length)
                    let text = String(plain.prefix(offset)) + special + String(plain.dropFirst(offset + 1))
                    let expected = String(plain.prefix(offset)) + escaped + String(plain.dropFirst(offset + 1))
                    #expect(JSONString.quote(text) == "\"\(expected)\"", "\(length)/\(offset)")
                    #expect(JSONValue.parse(Array(JSONString.quote(text).utf8)) == .string(text), "\(length)/\(offset)")
                }
                // A raw control character or a broken UTF-8 sequence inside a stride is refused.
                var raw = Array("\"\(String(repeating: "b", count: length))\"".utf8)
                raw[1 + offset] = 0x0A
                #expect(JSONValue.parse(raw) == Optional<JSONValue>.none)
                raw[1 + offset] = 0xC3
                #expect(JSONValue.parse(raw) == Optional<JSONValue>.none)
            }
        }
    }

    @Test("a byte scan finds the first match from any start, inside or after the sixteen-byte strides")
    func byteScan() {
        for length in 0..<50 {
            for position in 0..<length {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                bytes[position] = UInt8(ascii: ".")
                bytes.withUnsafeBufferPointer { buffer in
                    for start in 0...length {
                        let expected: Int? = start <= position ? position : nil
                        #expect(ByteScan.firstIndex(of: UInt8(ascii: "."), in: buffer, from: start) == expected)
                    }
                }
            }
        }
        // Bytes close to the target (its high bit flipped, its neighbours, zero) never match.
        let lookalikes = Array(repeating: [0xAE, 0x2D, 0x2F, 0x0E, 0xFF, 0x00, 0x6E, 0x2C] as [UInt8], count: 3).flatMap { $0 }
        lookalikes.withUnsafeBufferPointer { buffer in
            #expect(ByteScan.firstIndex(of: UInt8(ascii: "."), in: buffer, from: 0) == nil)
        }
    }

    @Test("random documents survive writing and parsing unchanged (fixed seed)")
    func jsonRoundTrips() {
        var random = SeededGenerator(seed: 0x9E37_79B9_7F4A_7C15)
        func next(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
        let pieces = ["a", "Zz09", "\"", "\\", "\n", "\u{01}", "\u{1F}", "<", ">", "&", "/", "\u{2028}", "\u{2029}", "é", "😀", "\u{7F}", "\u{E2}"]
        func text() -> String { (0..<next(40)).map { _ in pieces[next(pieces.count)] }.joined() }
        func value(_ depth: Int) -> JSONValue {
            switch next(depth > 3 ? 5 : 7) {
            case 0: return .null
            case 1: return .bool(next(2) == 0)
            case 2: return .number(Double(next(2_000_000_000)) - 1_000_000_000)
            case 3, 4: return .string(text())
            case 5: return .array((0..<next(5)).map { _ in value(depth + 1) })
            default:
                var members: JSONObject = [:]
                for _ in 0..<next(6) { members[text()] = value(depth + 1) }
                return .object(members)
            }
        }
        for round in 0..<2_000 {
            let document = value(0)
            let written = document.serialized()
            #expect(JSONValue.parse(written) == document, "round \(round): \(String(decoding: written, as: UTF8.self))")
        }
    }

    @Test("objects are built whole: nested members stay apart and a duplicate name anywhere is refused")
    func jsonObjects() {
        let text = #"{"a":{"b":1,"c":{"d":[{"e":2},{"e":3}]}},"f":{},"g":[{}],"h":"i"}"#
        let value = JSONValue.parse(Array(text.utf8))
        #expect(value?.jsonText == text)
        #expect(value?["a"]?["c"]?["d"] == [["e": 2], ["e": 3]])
        // A name spelled with escapes is the same name once decoded: `\u0061lg` is `alg`.
        for duplicate in [#"{"a":1,"a":2}"#, #"{"a":{"b":1,"b":1}}"#, #"[{"x":1},{"y":2,"y":3}]"#, #"{"a":[{"b":1}],"c":2,"a":3}"#,
                          #"{"alg":"RS256","\u0061lg":"none"}"#, #"{"k\u00e9y":1,"kéy":2}"#] {
            #expect(JSONValue.parse(Array(duplicate.utf8)) == Optional<JSONValue>.none, "\(duplicate)")
        }
        #expect(JSONValue.parse(Array(#"{"a":1,"b":{"c":2,}"#.utf8)) == Optional<JSONValue>.none)
    }

    @Test("quoting matches a byte-by-byte escaper on runs of escapes, mixed text and every length")
    func jsonQuotingAgainstReference() {
        func reference(_ text: String) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case "\u{2028}": out += "\\u2028"
                case "\u{2029}": out += "\\u2029"
                case "<", ">", "&", "\u{00}"..."\u{1F}":
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        let pieces = ["a", "\"", "\\", "\n", "\u{01}", "<", "&", "\u{2028}", "\u{E2}", "é", "xyzxyzxyzxyz", "\u{7F}", "\u{20AC}"]
        var state: UInt64 = 7
        for length in 0..<120 {
            var text = ""
            for _ in 0..<length {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                text += pieces[Int(state >> 33) % pieces.count]
            }
            #expect(JSONString.quote(text) == reference(text), "\(length)")
            var appended = Array("x".utf8)
            JSONString.append(text, to: &appended)
            #expect(appended == Array(("x" + reference(text)).utf8))
        }
        let escapes = String(repeating: "\u{01}<\"", count: 400)
        #expect(JSONString.quote(escapes) == reference(escapes))
    }

    @Test("an object with members added serialises as the merged object would, an added name replacing a member")
    func serializedObjectAdding() {
        let members: JSONObject = ["b": 1, "d": ["x": true], "é": "v", "access_token": "t"]
        let cases: [[(name: String, value: JSONValue)]] = [
            [], [("a", .null)], [("z", "last")], [("c", 2), ("a", "first"), ("e", [])], [("b", "replaced"), ("state", .null)],
            [("d", [:]), ("b", .null), ("é", 3), ("access_token", "u")],
        ]
        for extra in cases {
            var merged = members
            for (name, value) in extra { merged[name] = value }
            #expect(JSONValue.serializedObject(members, adding: extra) == JSONValue.object(merged).serialized(), "\(extra)")
            var added: JSONObject = [:]
            for (name, value) in extra { added[name] = value }
            #expect(JSONValue.serializedObject([:], adding: extra) == JSONValue.object(added).serialized())
        }
    }

    @Test("calendar fields of an instant: epoch, a leap day, an offset, and the formats built on them")
    func civilTime() {
        #expect(CivilTime(milliseconds: 0).iso8601Milliseconds == "1970-01-01T00:00:00.000Z")
        #expect(CivilTime(milliseconds: 951_868_799_500).iso8601Milliseconds == "2000-02-29T23:59:59.500Z")
        let instant: Int64 = 1_796_037_151_123
        #expect(CivilTime(milliseconds: instant).iso8601Seconds == "2026-11-30T11:12:31Z")
        #expect(CivilTime(milliseconds: instant, offsetMinutes: 480).compact == "20261130191231123")
        #expect(CivilTime(milliseconds: instant).compactDate == "20261130")
        #expect(CivilTime(milliseconds: -1).iso8601Milliseconds == "1969-12-31T23:59:59.999Z")
    }
}
