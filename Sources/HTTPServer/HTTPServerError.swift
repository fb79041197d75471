/// Why the server could not start.
public struct HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    private enum Code: String, Sendable {
        case invalidAddress
        case startFailed
    }

    private let code: Code
    public let reason: String

    private init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The listen address is not a usable socket address.
    public static func invalidAddress(_ reason: String) -> HTTPServerError { HTTPServerError(.invalidAddress, reason) }
    /// libmicrohttpd refused to start (port in use, no permission, resource limits).
    public static func startFailed(_ reason: String) -> HTTPServerError { HTTPServerError(.startFailed, reason) }

    public var description: String { reason }
    public static func == (lhs: HTTPServerError, rhs: HTTPServerError) -> Bool { lhs.code == rhs.code }
}
