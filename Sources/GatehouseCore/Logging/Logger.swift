/// A value-type logger in swift-log's shape: constant messages, data in dotted metadata keys.
/// Modules receive a `Logger` as a parameter; none creates its own.
public struct Logger: Sendable {
    /// Severity, ordered from most to least verbose.
    public enum Level: String, Sendable, Comparable, CaseIterable, Codable {
        case trace, debug, info, notice, warning, error, critical

        private var rank: Int {
            switch self {
            case .trace: 0
            case .debug: 1
            case .info: 2
            case .notice: 3
            case .warning: 4
            case .error: 5
            case .critical: 6
            }
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rank < rhs.rank }
    }

    /// Metadata attached to every entry from this logger, such as `request.id`.
    public typealias Metadata = [String: String]

    public let label: String
    public var level: Level
    public var metadata: Metadata
    private let handler: any LogHandler

    public init(label: String, level: Level = .info, handler: any LogHandler) {
        self.label = label
        self.level = level
        self.metadata = [:]
        self.handler = handler
    }

    /// A logger that drops everything, for tests and tools that must stay quiet.
    public static func silent(label: String = "gatehouse") -> Logger {
        Logger(label: label, level: .critical, handler: SilentLogHandler())
    }

    /// A copy whose entries also carry `key: value`.
    public func with(_ key: String, _ value: String) -> Logger {
        var copy = self
        copy.metadata[key] = value
        return copy
    }

    /// Logs `message` with extra metadata if `level` is enabled. Values under secret keys are
    /// redacted by the handler, so a careless call site cannot leak a token.
    public func log(_ level: Level, _ message: StaticString, _ extra: Metadata = [:]) {
        guard level >= self.level else { return }
        var merged = metadata
        for (key, value) in extra { merged[key] = value }
        handler.write(LogEntry(level: level, label: label, message: "\(message)", metadata: merged))
    }

    public func trace(_ message: StaticString, _ extra: Metadata = [:]) { log(.trace, message, extra) }
    public func debug(_ message: StaticString, _ extra: Metadata = [:]) { log(.debug, message, extra) }
    public func info(_ message: StaticString, _ extra: Metadata = [:]) { log(.info, message, extra) }
    public func notice(_ message: StaticString, _ extra: Metadata = [:]) { log(.notice, message, extra) }
    public func warning(_ message: StaticString, _ extra: Metadata = [:]) { log(.warning, message, extra) }
    public func error(_ message: StaticString, _ extra: Metadata = [:]) { log(.error, message, extra) }
    public func critical(_ message: StaticString, _ extra: Metadata = [:]) { log(.critical, message, extra) }
}

/// One log line before formatting.
public struct LogEntry: Sendable {
    public var level: Logger.Level
    public var label: String
    public var message: String
    public var metadata: Logger.Metadata
}

/// The single seam between loggers and outputs.
public protocol LogHandler: Sendable {
    func write(_ entry: LogEntry)
}

struct SilentLogHandler: LogHandler {
    func write(_ entry: LogEntry) {}
}
