/// A compact binary layout for records that only Gatehouse writes and reads back: a layout
/// byte, then fields in an order both sides know. Login records are written and read on every
/// sign-in; as JSON, their encoding and parsing (hashing every member name) cost more than
/// the store operations around them.
///
/// A string is its UTF-8 length plus one as a LEB128 varint (0 for an absent string), then
/// its bytes. Readers never trap on damaged input: they stop, and `finished` is false.
public struct RecordWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(layout: UInt8, capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(layout)
    }

    public mutating func append(_ text: String?) {
        guard let text else { return appendVarint(0) }
        text.withUTF8InPlace { utf8 in
            appendVarint(UInt64(utf8.count) + 1)
            bytes.append(contentsOf: utf8)
        }
    }

    public mutating func append(_ flag: Bool) {
        bytes.append(flag ? 1 : 0)
    }

    public mutating func append(_ number: Int64) {
        appendVarint(UInt64(bitPattern: number))
    }

    /// Bytes running to the end of the record; written last.
    public mutating func appendRemainder(_ tail: [UInt8]) {
        bytes.append(contentsOf: tail)
    }

    private mutating func appendVarint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }
}

/// Reads what `RecordWriter` wrote, field by field in the same order.
public struct RecordReader {
    private let bytes: [UInt8]
    private var position = 1
    /// A field ran past the end or was malformed; every later read returns its empty value.
    public private(set) var damaged = false

    /// Nil unless `bytes` starts with `layout`.
    public init?(_ bytes: [UInt8], layout: UInt8) {
        guard bytes.first == layout else { return nil }
        self.bytes = bytes
    }

    /// True once every field was read intact and nothing is left over.
    public var finished: Bool { !damaged && position == bytes.count }

    public mutating func string() -> String? {
        guard let marker = varint(), marker > 0 else { return nil }
        let count = marker - 1
        guard count <= UInt64(bytes.count - position) else { return fail(nil) }
        let start = position
        position += Int(count)
        return bytes.withUnsafeBufferPointer { buffer in
            String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<position]), as: UTF8.self)
        }
    }

    /// A string that must be present.
    public mutating func requiredString() -> String {
        guard let text = string() else { return fail("") }
        return text
    }

    public mutating func flag() -> Bool {
        guard position < bytes.count, bytes[position] <= 1 else { return fail(false) }
        defer { position += 1 }
        return bytes[position] == 1
    }

    public mutating func integer() -> Int64 {
        guard let value = varint() else { return 0 }
        return Int64(bitPattern: value)
    }

    /// Everything after the fields read so far.
    public mutating func remainder() -> [UInt8] {
        guard !damaged else { return [] }
        defer { position = bytes.count }
        return Array(bytes[position...])
    }

    private mutating func varint() -> UInt64? {
        guard !damaged else { return nil }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while position < bytes.count, shift < 64 {
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return fail(nil)
    }

    private mutating func fail<T>(_ empty: T) -> T {
        damaged = true
        return empty
    }
}
