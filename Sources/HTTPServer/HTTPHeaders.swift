internal import GatehouseCore

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

    init(fields: [Field]) {
        self.fields = fields
    }

    /// The first value of `name`, if present.
    public subscript(name: String) -> String? {
        // By index: handing each field to a closure copied it, retaining and releasing its
        // name and value, for every field passed over. The length is checked here although
        // `equalsIgnoringASCIICase` checks it too: the call retains the name it is made on.
        let length = name.utf8.count
        for index in fields.indices where fields[index].name.utf8.count == length && fields[index].name.equalsIgnoringASCIICase(name) {
            return fields[index].value
        }
        return nil
    }

    /// How many fields are named `name`, and the first one's value: by index, as above, so
    /// the framing checks that run on every request copy no field.
    func occurrences(of name: String) -> (count: Int, first: String?) {
        let length = name.utf8.count
        var count = 0
        var first: String?
        for index in fields.indices where fields[index].name.utf8.count == length {
            guard fields[index].name.equalsIgnoringASCIICase(name) else { continue }
            if count == 0 { first = fields[index].value }
            count += 1
        }
        return (count, first)
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    /// Appends a field, keeping earlier ones with the same name.
    public mutating func add(_ name: String, _ value: String) {
        // An answer carries a handful of fields: room for them at the first, instead of the
        // array growing (and moving) twice on the way.
        if fields.isEmpty { fields.reserveCapacity(8) }
        fields.append(Field(name: name, value: value))
    }

    /// Replaces every field named `name` with one value.
    public mutating func set(_ name: String, _ value: String) {
        fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
        fields.append(Field(name: name, value: value))
    }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }
}
