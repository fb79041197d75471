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
        var out = JSONOutput(capacity: 256)
        write(into: &out)
        return out.bytes()
    }

    /// `serialized()` as a string.
    public var jsonText: String {
        var out = JSONOutput(capacity: 256)
        write(into: &out)
        return out.string()
    }

    /// `JSONValue.object(members)` with `extra` added, each replacing a member of its name,
    /// serialised without building the merged dictionary first: a login's answer is the
    /// provider's token fields plus a few of Gatehouse's own. `extra`'s names are distinct.
    public static func serializedObject(_ members: JSONObject, adding extra: [(name: String, value: JSONValue)]) -> [UInt8] {
        // A login's answer usually holds an ID token of one to two kilobytes: room for it from
        // the start spares growing the buffer three or four times.
        var out = JSONOutput(capacity: 2048)
        writeObject(members, adding: extra, into: &out)
        return out.bytes()
    }

    private func write(into out: inout JSONOutput) {
        switch self {
        case .null: out.append("null")
        case .bool(let value): out.append(value ? "true" : "false")
        case .number(let value):
            if value.rounded() == value, abs(value) < 9.0e15 {
                Self.appendInteger(Int64(value), to: &out)
            } else {
                var text = String(value)
                text.withUTF8 { out.append($0) }
            }
        case .string(let value): JSONString.append(value, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members): Self.writeObject(members, adding: [], into: &out)
        }
    }

    /// A member's place in the key order: its key's first eight UTF-8 bytes as a big-endian
    /// number (zero-padded, so a shorter key sorts first), which orders nearly every pair
    /// with one integer comparison, and its position among the members.
    private struct Placement {
        var prefix: UInt64
        var position: Int
    }

    /// Members in key order. Sorting placements, not pairs (whose swaps retain and release
    /// both), in scratch space on the stack rather than an array per object. `extra` is
    /// merged in as the members are written.
    private static func writeObject(_ object: JSONObject, adding extra: [(name: String, value: JSONValue)], into out: inout JSONOutput) {
        let members = object.members
        withUnsafeTemporaryAllocation(of: Placement.self, capacity: members.count) { scratch in
            var count = 0
            for (position, member) in members.enumerated() where extra.isEmpty || !extra.contains(where: { $0.name == member.key }) {
                scratch.initializeElement(at: count, to: Placement(prefix: sortPrefix(member.key), position: position))
                count += 1
            }
            var order = UnsafeMutableBufferPointer(rebasing: scratch[..<count])
            defer { order.deinitialize() }
            if count > 1 {
                order.sort { $0.prefix != $1.prefix ? $0.prefix < $1.prefix : precedes(members[$0.position].key, members[$1.position].key) }
            }
            let added = extra.count > 1 ? extra.sorted { precedes($0.name, $1.name) } : extra
            out.append(UInt8(ascii: "{"))
            var next = 0
            // Each member is copied (its key and value retained) before it is written, even when
            // read in place or through typed output storage (both measured): the compiler cannot
            // prove that JSONOutput's pointer writes and reallocations leave the members alone.
            for placement in order {
                let member = members[placement.position]
                while next < added.count, precedes(added[next].name, member.key) {
                    appendMember(added[next].name, added[next].value, to: &out)
                    next += 1
                }
                appendMember(member.key, member.value, to: &out)
            }
            while next < added.count {
                appendMember(added[next].name, added[next].value, to: &out)
                next += 1
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// `"key":value`, after a comma unless it is the object's first.
    private static func appendMember(_ key: String, _ value: JSONValue, to out: inout JSONOutput) {
        if out.last != UInt8(ascii: "{") { out.append(UInt8(ascii: ",")) }
        JSONString.append(key, to: &out)
        out.append(UInt8(ascii: ":"))
        value.write(into: &out)
    }

    private static func sortPrefix(_ key: String) -> UInt64 {
        func prefix(_ utf8: UnsafeBufferPointer<UInt8>) -> UInt64 {
            if utf8.count >= 8, let base = UnsafeRawPointer(utf8.baseAddress) {
                return UInt64(bigEndian: base.loadUnaligned(as: UInt64.self))
            }
            var prefix: UInt64 = 0
            for index in 0..<8 { prefix = prefix << 8 | UInt64(index < utf8.count ? utf8[index] : 0) }
            return prefix
        }
        return key.withUTF8InPlace(prefix)
    }

    /// Key order: UTF-8 byte order, which is code point order. `String.<` orders NFC text the
    /// same way but pays for Unicode-aware comparison on every step of the sort; any other
    /// text still gets one fixed order, which is all serialising needs.
    private static func precedes(_ first: String, _ second: String) -> Bool {
        let ordered = first.utf8.withContiguousStorageIfAvailable { left in
            second.utf8.withContiguousStorageIfAvailable { right in
                for index in 0..<min(left.count, right.count) where left[index] != right[index] {
                    return left[index] < right[index]
                }
                return left.count < right.count
            }
        }
        return (ordered ?? nil) ?? first.utf8.lexicographicallyPrecedes(second.utf8)
    }

    private static func appendInteger(_ value: Int64, to out: inout JSONOutput) {
        // A sign and at most 16 digits (9.0e15), which come out last first.
        out.reserve(17)
        if value < 0 { out.appendReserved(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64) = (0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { out.appendReserved(buffer[index]) }
        }
    }
}
