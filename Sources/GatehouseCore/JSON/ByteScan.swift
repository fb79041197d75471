/// Eight-byte strides over the plain runs JSON text is mostly made of (a token's base64url, a
/// URL), so the per-byte loops after them only look at what ends a run. Each stride tests all
/// eight bytes at once with the carry tricks below, which are exact for "is there any such byte".
public enum ByteScan {
    /// The offset of the first `byte` at or after `start`, or nil. Compact JWS parsing looks
    /// for its dots this way: a token is a kilobyte of base64url with two of them.
    public static func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = UnsafeRawPointer(bytes.baseAddress) else { return nil }
        var index = start
        while bytes.count - index >= 8, !has(base.loadUnaligned(fromByteOffset: index, as: UInt64.self), byte) {
            index += 8
        }
        while index < bytes.count {
            if bytes[index] == byte { return index }
            index += 1
        }
        return nil
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Advances `index` over bytes that cannot end or escape inside a JSON string (no `"`,
    /// `\`, or control character), whole strides only. Returns the OR of the bytes passed,
    /// whose top bit says whether the run held anything but ASCII.
    @inline(__always)
    static func skipPlainString(_ bytes: UnsafeBufferPointer<UInt8>, from index: inout Int) -> UInt8 {
        guard let base = UnsafeRawPointer(bytes.baseAddress) else { return 0 }
        var seen: UInt64 = 0
        while bytes.count - index >= 8 {
            let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            guard !hasControl(word), !has(word, 0x22), !has(word, 0x5C) else { break }
            seen |= word
            index += 8
        }
        return seen & highs == 0 ? 0 : 0x80
    }

    /// Advances `index` over bytes that `JSONString` copies unchanged: none of the above, nor
    /// `<`, `>`, `&` or 0xE2 (the lead byte of U+2028/U+2029), whole strides only.
    @inline(__always)
    static func skipQuotable(_ bytes: UnsafeBufferPointer<UInt8>, from index: inout Int) {
        guard let base = UnsafeRawPointer(bytes.baseAddress) else { return }
        while bytes.count - index >= 8 {
            let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if hasControl(word) || has(word, 0x22) || has(word, 0x5C) || has(word, 0x3C) || has(word, 0x3E)
                || has(word, 0x26) || has(word, 0xE2)
            {
                return
            }
            index += 8
        }
    }

    /// Whether some byte of `word` is below 0x20.
    @inline(__always)
    private static func hasControl(_ word: UInt64) -> Bool {
        (word &- ones &* 0x20) & ~word & highs != 0
    }

    /// Whether some byte of `word` equals `byte`.
    @inline(__always)
    private static func has(_ word: UInt64, _ byte: UInt8) -> Bool {
        let zeroed = word ^ (ones &* UInt64(byte))
        return (zeroed &- ones) & ~zeroed & highs != 0
    }
}
