extension JSONValue {
    /// Parses one JSON text strictly (see `JSONParser`); nil for anything else.
    public static func parse(_ bytes: [UInt8]) -> JSONValue? {
        JSONParser.parse(bytes)
    }

    /// Parses the UTF-8 of `text`.
    public static func parse(_ text: String) -> JSONValue? {
        JSONParser.parse(Array(text.utf8))
    }

    /// Compact JSON with object keys sorted, so equal values serialise identically. Strings
    /// are quoted by `JSONString`, which also escapes `<`, `>` and `&`, so the output is safe
    /// to place inside a `<script>` element.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(into: &out)
        return out
    }

    /// `serialized()` as a string.
    public var jsonText: String { String(decoding: serialized(), as: UTF8.self) }

    private func write(into out: inout [UInt8]) {
        switch self {
        case .null: out += Array("null".utf8)
        case .bool(let value): out += Array((value ? "true" : "false").utf8)
        case .number(let value):
            if value.rounded() == value, abs(value) < 9.0e15 {
                out += Array(String(Int64(value)).utf8)
            } else {
                out += Array(String(value).utf8)
            }
        case .string(let value): JSONString.append(value, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONString.append(key, to: &out)
                out.append(UInt8(ascii: ":"))
                members[key]?.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}
