extension StringProtocol {
    /// Whether `needle` occurs in these UTF-8 bytes. The standard `contains(_:)` for strings
    /// goes through `_StringProcessing`'s generic searcher, which costs microseconds per call;
    /// request paths ask this of URLs and media types several times per request. Byte equality
    /// is the right test there: both sides are ASCII syntax (`?`, `#`, `://`, `json`).
    @inlinable
    public func containsBytes(_ needle: StaticString) -> Bool {
        let pattern = UnsafeBufferPointer(start: needle.utf8Start, count: needle.utf8CodeUnitCount)
        guard let first = pattern.first else { return true }
        let found = utf8.withContiguousStorageIfAvailable { text -> Bool in
            guard text.count >= pattern.count else { return false }
            var start = 0
            let last = text.count - pattern.count
            while start <= last {
                if text[start] == first, pattern.indices.allSatisfy({ text[start + $0] == pattern[$0] }) { return true }
                start += 1
            }
            return false
        }
        return found ?? String(self).containsBytes(needle)
    }

    /// Whether these UTF-8 bytes end with `suffix`; byte equality for the same reasons.
    @inlinable
    public func hasSuffixBytes(_ suffix: StaticString) -> Bool {
        let pattern = UnsafeBufferPointer(start: suffix.utf8Start, count: suffix.utf8CodeUnitCount)
        let found = utf8.withContiguousStorageIfAvailable { text -> Bool in
            guard text.count >= pattern.count else { return false }
            let start = text.count - pattern.count
            return pattern.indices.allSatisfy { text[start + $0] == pattern[$0] }
        }
        return found ?? String(self).hasSuffixBytes(suffix)
    }

    /// `body` over the UTF-8 where it lies. `withUTF8` needs a mutable copy, which costs a
    /// retain and a release (two atomic operations) on every call; on request paths that ran
    /// for every JSON string written and every header compared. Only text without contiguous
    /// UTF-8 (a bridged string) is copied.
    @inlinable
    public func withUTF8InPlace<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        if let result = try utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = String(self)
        return try copy.withUTF8(body)
    }
}

extension String {
    /// Equality ignoring ASCII case, over contiguous bytes: header names are ASCII tokens,
    /// compared on every header lookup, where `lowercased()` would allocate and apply Unicode
    /// rules they do not need.
    public func equalsIgnoringASCIICase(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        return withUTF8InPlace { a in
            other.withUTF8InPlace { b in
                for index in 0..<a.count where a[index] != b[index] {
                    let folded = a[index] | 0x20
                    guard folded == b[index] | 0x20, folded >= UInt8(ascii: "a"), folded <= UInt8(ascii: "z") else { return false }
                }
                return true
            }
        }
    }
}
