internal import Synchronization

/// Request ids: a caller's well-formed `X-Request-Id` is kept so traces join up across
/// proxies; otherwise a per-process random prefix plus a counter, unique and cheap.
enum RequestID {
    private static let prefix: String = {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt32
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }()

    private static let counter = Atomic<UInt64>(0)

    static func next() -> String {
        let value = counter.add(1, ordering: .relaxed).newValue
        return prefix + "-" + String(value, radix: 16)
    }

    /// The caller's id if it is short and made of safe characters; it ends up in logs and headers.
    static func accept(_ candidate: String?) -> String? {
        guard let candidate, !candidate.isEmpty, candidate.utf8.count <= 64 else { return nil }
        let safe = candidate.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
        return safe ? candidate : nil
    }
}
