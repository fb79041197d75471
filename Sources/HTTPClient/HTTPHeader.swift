/// One header field, kept as an ordered name/value pair rather than a
/// dictionary entry because HTTP allows repeated fields (`Set-Cookie`,
/// `WWW-Authenticate`) whose order and multiplicity matter.
public struct HTTPHeader: Sendable, Hashable {
    /// Field name as sent or received; comparisons elsewhere ignore ASCII
    /// case because HTTP field names are case-insensitive.
    public var name: String
    /// Field value with surrounding whitespace removed, since optional
    /// whitespace around values carries no meaning on the wire.
    public var value: String

    /// Plain memberwise initialiser; validation happens when a request is
    /// executed so that building requests never has to throw.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension HTTPHeader {
    /// ASCII case-insensitive name match without allocating lowercased
    /// copies on every lookup.
    func hasName(_ other: String) -> Bool {
        let lhs = name.utf8
        let rhs = other.utf8
        guard lhs.count == rhs.count else { return false }
        for (a, b) in zip(lhs, rhs) where asciiLower(a) != asciiLower(b) {
            return false
        }
        return true
    }
}

/// Lowercases one ASCII byte; non-letters pass through unchanged.
func asciiLower(_ byte: UInt8) -> UInt8 {
    (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
}
