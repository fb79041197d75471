#if canImport(Glibc)
internal import Glibc
#endif

/// A JSON object's members, in the order they were added, with the part of `Dictionary`'s
/// interface the code uses.
///
/// Token headers, claims and request bodies have a handful of members each and are parsed,
/// read a few times and thrown away on every login. Kept in a `Dictionary`, each of their keys
/// was hashed (SipHash) when the object was built and again at every lookup, and each object
/// cost a hash table; a short array compared by length and bytes is cheaper for all of that.
/// An object that grows past `indexedCount` members also gets a key index, so a large
/// provider response or a hostile body still costs one hash per lookup, never a scan.
///
/// Member names are compared by their UTF-8 bytes, as JSON parsers elsewhere compare them,
/// not by Unicode canonical equivalence as `String`'s `==` does: a name counts as repeated,
/// or as the one looked up, exactly when other implementations would agree.
public struct JSONObject: Sendable {
    public typealias Element = (key: String, value: JSONValue)

    /// One member. A struct rather than the `Element` tuple: arrays of tuples are copied and
    /// destroyed through the runtime's generic tuple witnesses, a call per member.
    @usableFromInline
    struct Member: Sendable {
        @usableFromInline let key: String
        @usableFromInline var value: JSONValue
        /// The key's length and first bytes (`probe(of:)`), so that a lookup passes over other
        /// keys without reading their text: every read of a key's bytes retains and releases
        /// its storage, which cost more than the comparisons themselves.
        @usableFromInline let probe: UInt64

        @usableFromInline
        init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
            probe = key.withUTF8InPlace(JSONObject.probe(of:))
        }
    }

    @usableFromInline
    var members: [Member]
    /// Each key's position in `members`; only for objects of more than `indexedCount` members.
    @usableFromInline
    var index: [MemberName: Int]?

    @usableFromInline
    static let indexedCount = 12

    public init() {
        members = []
    }

    public init(minimumCapacity: Int) {
        members = []
        members.reserveCapacity(minimumCapacity)
    }

    /// Members with distinct keys; nil when a key repeats.
    init?(uniqueMembers: [Member]) {
        members = uniqueMembers
        guard indexIfLarge() else { return nil }
        if index == nil {
            let repeated = members.withUnsafeBufferPointer { buffer in
                buffer.indices.contains { later in
                    buffer[..<later].contains { $0.probe == buffer[later].probe && Self.sameKey($0, buffer[later]) }
                }
            }
            if repeated { return nil }
        }
    }

    /// The members of `dictionary` (in its iteration order).
    public init(_ dictionary: [String: JSONValue]) {
        members = dictionary.map { Member(key: $0.key, value: $0.value) }
        _ = indexIfLarge()
    }

    /// `strings` as members whose values are JSON strings.
    public init(strings: [String: String]) {
        members = strings.map { Member(key: $0.key, value: .string($0.value)) }
        _ = indexIfLarge()
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    public var keys: [String] { members.map(\.key) }
    public var first: Element? { members.first.map { (key: $0.key, value: $0.value) } }

    @inlinable
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            if let position = position(of: key) {
                if let newValue {
                    members[position].value = newValue
                } else {
                    members.remove(at: position)
                    index = nil
                    _ = indexIfLarge()
                }
            } else if let newValue {
                members.append(Member(key: key, value: newValue))
                if index != nil {
                    index?[MemberName(key)] = members.count - 1
                } else {
                    _ = indexIfLarge()
                }
            }
        }
    }

    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        let old = self[key]
        if old != nil { self[key] = nil }
        return old
    }

    /// The values `transform` maps to something, by key.
    public func compactMapValues<T>(_ transform: (JSONValue) throws -> T?) rethrows -> [String: T] {
        var mapped = [String: T](minimumCapacity: members.count)
        for (key, value) in self {
            if let result = try transform(value) { mapped[key] = result }
        }
        return mapped
    }

    /// The members `isIncluded` accepts, as an object.
    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> JSONObject {
        var kept = JSONObject()
        kept.members = try members.filter { try isIncluded((key: $0.key, value: $0.value)) }
        _ = kept.indexIfLarge()
        return kept
    }

    /// This object with `other`'s members added; `combine` picks the value of a shared key.
    public func merging(_ other: JSONObject, uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue) rethrows -> JSONObject {
        var merged = self
        try merged.merge(other, uniquingKeysWith: combine)
        return merged
    }

    public mutating func merge(_ other: JSONObject, uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue) rethrows {
        for (key, value) in other {
            if let mine = self[key] {
                self[key] = try combine(mine, value)
            } else {
                self[key] = value
            }
        }
    }

    /// The same members as a dictionary, for `Codable`.
    var dictionary: [String: JSONValue] {
        Dictionary(members.lazy.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    @usableFromInline
    func position(of key: String) -> Int? {
        if let index { return index[MemberName(key)] }
        return Self.position(of: key, in: members[...])
    }

    private static func position(of key: String, in members: ArraySlice<Member>) -> Int? {
        key.withUTF8InPlace { wanted in
            let probe = probe(of: wanted)
            return members.withUnsafeBufferPointer { buffer in
                for offset in buffer.indices where buffer[offset].probe == probe {
                    if wanted.count <= probedBytes || buffer[offset].key.withUTF8InPlace({ sameBytes($0, wanted) }) {
                        return members.startIndex + offset
                    }
                }
                return nil
            }
        }
    }

    /// How many of a key's first bytes its probe holds: a key no longer than this equals
    /// another exactly when their probes are equal.
    private static let probedBytes = 7

    /// A key's length (up to 255) in the top byte and its first `probedBytes` bytes below.
    @usableFromInline
    static func probe(of utf8: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var probe = UInt64(Swift.min(utf8.count, 255)) << 56
        for offset in 0..<Swift.min(utf8.count, probedBytes) { probe |= UInt64(utf8[offset]) << (8 * UInt64(offset)) }
        return probe
    }

    /// Whether two members with equal probes have the same key.
    private static func sameKey(_ first: Member, _ second: Member) -> Bool {
        first.key.utf8.count <= probedBytes || first.key.withUTF8InPlace { left in second.key.withUTF8InPlace { sameBytes(left, $0) } }
    }

    fileprivate static func sameBytes(_ first: UnsafeBufferPointer<UInt8>, _ second: UnsafeBufferPointer<UInt8>) -> Bool {
        guard first.count == second.count else { return false }
        guard let left = first.baseAddress, let right = second.baseAddress else { return true }
        return memcmp(left, right, first.count) == 0
    }

    /// Builds the key index once the object is large enough to need one; false when two
    /// members share a key.
    @usableFromInline
    mutating func indexIfLarge() -> Bool {
        guard index == nil, members.count > Self.indexedCount else { return true }
        var built = [MemberName: Int](minimumCapacity: members.count)
        for (position, member) in members.enumerated() where built.updateValue(position, forKey: MemberName(member.key)) != nil {
            return false
        }
        index = built
        return true
    }
}

/// A member name as a key of the index: hashed and compared by its UTF-8 bytes.
@usableFromInline
struct MemberName: Hashable, Sendable {
    @usableFromInline
    let text: String

    @usableFromInline
    init(_ text: String) {
        self.text = text
    }

    @usableFromInline
    static func == (lhs: MemberName, rhs: MemberName) -> Bool {
        lhs.text.withUTF8InPlace { left in rhs.text.withUTF8InPlace { JSONObject.sameBytes(left, $0) } }
    }

    @usableFromInline
    func hash(into hasher: inout Hasher) {
        text.withUTF8InPlace { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

extension JSONObject: Sequence {
    public struct Iterator: IteratorProtocol {
        @usableFromInline
        var base: IndexingIterator<[Member]>

        @inlinable
        public mutating func next() -> Element? {
            base.next().map { (key: $0.key, value: $0.value) }
        }
    }

    public func makeIterator() -> Iterator {
        Iterator(base: members.makeIterator())
    }

    public var underestimatedCount: Int { members.count }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// A repeated key keeps its last value, as `JSONValue`'s dictionary literal always did.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(lastWins: elements)
    }

    /// `elements` as members; a repeated key keeps its last value. Both dictionary literals,
    /// this type's and `JSONValue`'s, come here.
    init(lastWins elements: [(String, JSONValue)]) {
        self.init(minimumCapacity: elements.count)
        for (key, value) in elements { self[key] = value }
    }
}

/// Equal when they have the same keys with equal values, in any order: JSON objects are
/// unordered (RFC 8259 §4).
extension JSONObject: Hashable {
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return lhs.members.allSatisfy { rhs[$0.key] == $0.value }
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent: each member hashes alone and the results are combined with a
        // commutative operation.
        var combined = 0
        for member in members {
            var alone = Hasher()
            alone.combine(member.key)
            alone.combine(member.value)
            combined ^= alone.finalize()
        }
        hasher.combine(count)
        hasher.combine(combined)
    }
}

extension JSONObject: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(try [String: JSONValue](from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try dictionary.encode(to: encoder)
    }
}
