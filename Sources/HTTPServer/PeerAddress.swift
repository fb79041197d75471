/// The client's IP address, kept as bytes and formatted only when read: most requests never
/// need the text, and formatting on every request showed up in profiles.
public struct PeerAddress: Sendable, Hashable, CustomStringConvertible {
    let bytes: (UInt64, UInt64)
    let length: UInt8

    /// An unknown address.
    public static let unknown = PeerAddress(high: 0, low: 0, length: 0)

    init(high: UInt64, low: UInt64, length: UInt8) {
        bytes = (high, low)
        self.length = length
    }

    public static func == (lhs: PeerAddress, rhs: PeerAddress) -> Bool {
        lhs.length == rhs.length && lhs.bytes.0 == rhs.bytes.0 && lhs.bytes.1 == rhs.bytes.1
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(length)
        hasher.combine(bytes.0)
        hasher.combine(bytes.1)
    }

    private func byte(_ index: Int) -> UInt8 {
        let word = index < 8 ? bytes.0 : bytes.1
        return UInt8(truncatingIfNeeded: word >> UInt64((7 - index % 8) * 8))
    }

    /// Dotted IPv4 or full-form IPv6 (`2001:db8:0:0:0:0:0:1`), or `unknown`.
    public var description: String {
        switch length {
        case 4:
            return (0..<4).map { String(byte($0)) }.joined(separator: ".")
        case 16:
            return stride(from: 0, to: 16, by: 2).map { String(UInt16(byte($0)) << 8 | UInt16(byte($0 + 1)), radix: 16) }
                .joined(separator: ":")
        default:
            return "unknown"
        }
    }

    /// Builds an address from up to 16 bytes in network order.
    static func from(_ raw: UnsafeBufferPointer<UInt8>, count: Int) -> PeerAddress {
        guard count == 4 || count == 16 else { return .unknown }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for index in 0..<count {
            if index < 8 {
                high |= UInt64(raw[index]) << UInt64((7 - index) * 8)
            } else {
                low |= UInt64(raw[index]) << UInt64((15 - index) * 8)
            }
        }
        return PeerAddress(high: high, low: low, length: UInt8(count))
    }
}
