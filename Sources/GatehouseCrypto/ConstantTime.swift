internal import COpenSSL
internal import GatehouseCore

/// Comparison whose running time does not depend on where the inputs differ, for secrets
/// and tokens a caller presents.
public enum ConstantTime {
    /// True if both byte strings are equal. Lengths are compared openly: secrets here have a
    /// fixed, public length, so the length leaks nothing.
    public static func equals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        lhs.withUnsafeBufferPointer { a in rhs.withUnsafeBufferPointer { b in equals(a, b) } }
    }

    /// String form of `equals(_:_:)` over the UTF-8 bytes, read in place: app secrets,
    /// nonces and codes are compared on every sign-in, and copying both into arrays cost
    /// two allocations each time.
    public static func equals(_ lhs: String, _ rhs: String) -> Bool {
        lhs.withUTF8InPlace { a in rhs.withUTF8InPlace { b in equals(a, b) } }
    }

    private static func equals(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard a.count > 0 else { return true }
        guard let left = a.baseAddress, let right = b.baseAddress else { return false }
        return CRYPTO_memcmp(left, right, a.count) == 0
    }
}
