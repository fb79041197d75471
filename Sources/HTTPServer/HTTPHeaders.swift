/// Header fields in arrival order. Names keep the case they were given (responses read
/// better that way) and compare case-insensitively, as HTTP requires.
public struct HTTPHeaders: Sendable, Hashable, Sequence {
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String
    }

    private var fields: [Field]

    public init(_ pairs: [(String, String)] = []) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    /// The first value of `name`, if present.
    public subscript(name: String) -> String? {
        fields.first { Self.same($0.name, name) }?.value
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { Self.same($0.name, name) }.map(\.value)
    }

    /// Appends a field, keeping earlier ones with the same name.
    public mutating func add(_ name: String, _ value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces every field named `name` with one value.
    public mutating func set(_ name: String, _ value: String) {
        fields.removeAll { Self.same($0.name, name) }
        fields.append(Field(name: name, value: value))
    }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// ASCII case-insensitive equality; header names are ASCII tokens. Every lookup walks
    /// the fields with it, so it compares contiguous bytes rather than zipping two views.
    private static func same(_ lhs: String, _ rhs: String) -> Bool {
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        var lhs = lhs
        var rhs = rhs
        return lhs.withUTF8 { a in
            rhs.withUTF8 { b in
                for index in 0..<a.count {
                    let x = a[index]
                    let y = b[index]
                    if x != y, !(x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7A) { return false }
                }
                return true
            }
        }
    }
}
