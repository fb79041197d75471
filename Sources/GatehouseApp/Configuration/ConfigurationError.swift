/// A setting that cannot be used. The message is the one line printed before exit code 2.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
