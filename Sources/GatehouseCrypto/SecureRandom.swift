internal import COpenSSL
internal import GatehouseCore
internal import Synchronization

/// Cryptographically strong random bytes and identifiers from OpenSSL's DRBG.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        if count <= RandomReserve.largestServed, let bytes = reserve.withLock({ $0.take(count) }) {
            return bytes
        }
        var buffer = [UInt8](repeating: 0, count: count)
        let ok = buffer.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        guard ok == 1 else { throw .randomUnavailable(CryptoError.drainOpenSSLErrors()) }
        return buffer
    }

    /// A 27-character base64url identifier (160 random bits): the form of OAuth.io keys,
    /// secrets, states and codes, so existing SDK validation (`^[a-zA-Z0-9\-_]{23,27}$`) accepts it.
    public static func identifier() throws(CryptoError) -> String {
        Base64URL.encode(try bytes(20))
    }

    private static let reserve = Mutex(RandomReserve())
}

/// DRBG output drawn a few KiB at a time and handed out once each. Every `RAND_bytes` call
/// costs a `getpid` system call (OpenSSL's fork check) besides the generation itself, and a
/// login asks for random bytes about six times; drawing in bulk makes that one call in a
/// couple of hundred logins. Gatehouse never forks, so the fork check has nothing to catch.
/// Bytes leave the reserve as they are handed out: nothing issued stays behind in it.
private struct RandomReserve: ~Copyable {
    /// Larger requests (keys, rare) go straight to the DRBG.
    static let largestServed = 64
    private static let capacity = 4096

    private let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: Self.capacity)
    /// Where the unissued bytes start; `capacity` when the reserve is spent.
    private var next = Self.capacity

    /// `count` bytes (at most `largestServed`); nil if the DRBG failed to refill the reserve,
    /// in which case the caller asks it directly and reports its error.
    mutating func take(_ count: Int) -> [UInt8]? {
        if Self.capacity - next < count {
            guard RAND_bytes(storage.baseAddress, Int32(Self.capacity)) == 1 else {
                ERR_clear_error()
                return nil
            }
            next = 0
        }
        let issued = UnsafeMutableBufferPointer(rebasing: storage[next..<next + count])
        let bytes = [UInt8](issued)
        OPENSSL_cleanse(issued.baseAddress, count)
        next += count
        return bytes
    }

    deinit { storage.deallocate() }
}
