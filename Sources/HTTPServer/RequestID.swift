internal import Synchronization

/// Request ids: a caller's well-formed `X-Request-Id` is kept so traces join up across
/// proxies; otherwise a per-process random prefix plus a counter, unique and cheap.
enum RequestID {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Six random hex digits, fixed for the process.
    private static let prefix: UInt32 = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next() as UInt32) & 0xFF_FFFF
    }()

    private static let counter = Atomic<UInt64>(0)

    /// The process prefix followed by a hex counter: at most 15 characters, so the string
    /// stays inline and costs no allocation on the hot path.
    static func next() -> String {
        let value = counter.add(1, ordering: .relaxed).newValue & 0xF_FFFF_FFFF
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 15) { buffer in
            var length = 0
            for shift in stride(from: 20, through: 0, by: -4) {
                buffer[length] = digits[Int((prefix >> UInt32(shift)) & 0xF)]
                length += 1
            }
            var started = false
            for shift in stride(from: 32, through: 0, by: -4) {
                let digit = Int((value >> UInt64(shift)) & 0xF)
                if digit != 0 || started || shift == 0 {
                    started = true
                    buffer[length] = digits[digit]
                    length += 1
                }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[0..<length]), as: UTF8.self)
        }
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
