internal import COpenSSL
internal import GatehouseCore
internal import Synchronization

/// Cryptographically strong random bytes and identifiers from OpenSSL's DRBG.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        guard buffer.withUnsafeMutableBytes(fill) else { throw .randomUnavailable(CryptoError.drainOpenSSLErrors()) }
        return buffer
    }

    /// Fills `target` with random bytes, for a caller building a value around them; false if
    /// the DRBG failed, with its reason on OpenSSL's error queue.
    static func fill(_ target: UnsafeMutableRawBufferPointer) -> Bool {
        // The address crosses into the lock as an integer: a captured pointer would tie the
        // reserve to the caller's isolation region, which Mutex refuses.
        let address = Int(bitPattern: target.baseAddress), count = target.count
        if count <= RandomReserve.largestServed, reserve.withLock({ $0.fill(UnsafeMutableRawPointer(bitPattern: address), count: count) }) {
            return true
        }
        return RAND_bytes(target.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(target.count)) == 1
    }

    /// A 27-character base64url identifier (160 random bits): the form of OAuth.io keys,
    /// secrets, states and codes, so existing SDK validation (`^[a-zA-Z0-9\-_]{23,27}$`) accepts it.
    public static func identifier() throws(CryptoError) -> String {
        // Drawn into a value on the stack rather than an array: only the text is kept.
        var raw: (UInt64, UInt64, UInt32) = (0, 0, 0)
        guard withUnsafeMutableBytes(of: &raw, fill) else { throw .randomUnavailable(CryptoError.drainOpenSSLErrors()) }
        return withUnsafeBytes(of: raw) { Base64URL.encode($0) }
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

    /// Fills `count` bytes (at most `largestServed`) at `target`; false if the DRBG failed to
    /// refill the reserve, in which case the caller asks it directly and reports its error.
    mutating func fill(_ target: UnsafeMutableRawPointer?, count: Int) -> Bool {
        guard let target else { return count == 0 }
        if Self.capacity - next < count {
            guard RAND_bytes(storage.baseAddress, Int32(Self.capacity)) == 1 else {
                ERR_clear_error()
                return false
            }
            next = 0
        }
        let issued = UnsafeMutableBufferPointer(rebasing: storage[next..<next + count])
        UnsafeMutableRawBufferPointer(start: target, count: count).copyMemory(from: UnsafeRawBufferPointer(issued))
        OPENSSL_cleanse(issued.baseAddress, count)
        next += count
        return true
    }

    deinit { storage.deallocate() }
}
