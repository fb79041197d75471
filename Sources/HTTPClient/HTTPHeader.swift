internal import GatehouseCore

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
    /// Whether the field is named `other`, ignoring ASCII case as HTTP does, without
    /// allocating lowercased copies on every lookup.
    public func hasName(_ other: String) -> Bool { name.equalsIgnoringASCIICase(other) }
}
