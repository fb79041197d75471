/// Why a store operation failed. The `reason` is for logs only: it can hold backend text
/// that clients must never see.
public struct StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: String, Sendable {
        case unavailable
        case conflict
        case corrupt
        case invalidLocation
    }

    private let code: Code
    /// Details for the operator's log.
    public let reason: String

    private init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The backend cannot be reached or refused the operation (maps to 503).
    public static func unavailable(_ reason: String) -> StoreError { StoreError(.unavailable, reason) }
    /// A row with this identity already exists.
    public static func conflict(_ reason: String) -> StoreError { StoreError(.conflict, reason) }
    /// Stored data could not be read back (wrong schema version, damaged row).
    public static func corrupt(_ reason: String) -> StoreError { StoreError(.corrupt, reason) }
    /// The configured store location is not usable.
    public static func invalidLocation(_ reason: String) -> StoreError { StoreError(.invalidLocation, reason) }

    /// A label without details, safe for metrics and comparisons.
    public var shortDescription: String { code.rawValue }
    public var description: String { "store \(code.rawValue): \(reason)" }

    /// Errors compare by kind only; reasons vary with backend wording.
    public static func == (lhs: StoreError, rhs: StoreError) -> Bool { lhs.code == rhs.code }

    public var isConflict: Bool { code == .conflict }
    public var isUnavailable: Bool { code == .unavailable }
}
