#if canImport(Glibc)
internal import Glibc
#endif
internal import Synchronization

/// Writes one line per entry to standard error: `text` for people at a terminal, `json`
/// (one object per line) for collectors.
public final class StreamLogHandler: LogHandler {
    /// The line format.
    public enum Format: String, Sendable, CaseIterable {
        case text, json
    }

    private let format: Format
    private let sink: Mutex<Sink>

    /// A handler writing to standard error in `format`.
    public init(format: Format) {
        self.format = format
        self.sink = Mutex(Sink(descriptor: 2))
    }

    /// A handler collecting lines in memory, for tests.
    public init(format: Format, capture: @escaping @Sendable (String) -> Void) {
        self.format = format
        self.sink = Mutex(Sink(descriptor: -1, capture: capture))
    }

    /// Text when standard error is a terminal, JSON otherwise (interface.md §1).
    public static var defaultFormat: Format {
        isatty(2) == 1 ? .text : .json
    }

    public func write(_ entry: LogEntry) {
        let metadata = Redaction.apply(to: entry.metadata)
        let line: String
        switch format {
        case .text: line = Self.textLine(entry, metadata: metadata)
        case .json: line = Self.jsonLine(entry, metadata: metadata)
        }
        sink.withLock { $0.emit(line + "\n") }
    }

    static func textLine(_ entry: LogEntry, metadata: Logger.Metadata) -> String {
        var line = "\(Timestamp.iso8601()) \(entry.level.rawValue.uppercased()) \(entry.label): \(entry.message)"
        for key in metadata.keys.sorted() {
            line += " \(key)=\(metadata[key] ?? "")"
        }
        return line
    }

    static func jsonLine(_ entry: LogEntry, metadata: Logger.Metadata) -> String {
        var line = "{\"time\":\(JSONString.quote(Timestamp.iso8601())),\"level\":\"\(entry.level.rawValue)\""
        line += ",\"logger\":\(JSONString.quote(entry.label)),\"message\":\(JSONString.quote(entry.message))"
        for key in metadata.keys.sorted() {
            line += ",\(JSONString.quote(key)):\(JSONString.quote(metadata[key] ?? ""))"
        }
        return line + "}"
    }
}

private struct Sink: ~Copyable {
    let descriptor: Int32
    var capture: (@Sendable (String) -> Void)? = nil

    func emit(_ line: String) {
        if let capture {
            capture(line)
            return
        }
        var bytes = Array(line.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
            }
            if written <= 0 { return }
            offset += written
        }
    }
}
