internal import COpenSSL

/// Comparison whose running time does not depend on where the inputs differ, for secrets
/// and tokens a caller presents.
public enum ConstantTime {
    /// True if both byte strings are equal. Lengths are compared openly: secrets here have a
    /// fixed, public length, so the length leaks nothing.
    public static func equals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.isEmpty { return true }
        return lhs.withUnsafeBytes { a in
            rhs.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0 }
        }
    }

    /// String form of `equals(_:_:)` over the UTF-8 bytes.
    public static func equals(_ lhs: String, _ rhs: String) -> Bool {
        equals(Array(lhs.utf8), Array(rhs.utf8))
    }
}
