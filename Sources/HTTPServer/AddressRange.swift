/// An address block such as `10.0.0.0/8` or `fd00::/8`, or one address: the proxies whose
/// `X-Forwarded-For` a gateway trusts.
public struct AddressRange: Sendable, Hashable, CustomStringConvertible {
    let base: PeerAddress
    let prefixLength: Int
    public let description: String

    /// `ADDRESS` or `ADDRESS/PREFIX`, IPv4 dotted or IPv6 text.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = PeerAddress(parts[0]) else { return nil }
        let bits = Int(address.length) * 8
        var prefix = bits
        if parts.count == 2 {
            guard let value = Int(parts[1]), (0...bits).contains(value), parts[1].allSatisfy(\.isASCII) else { return nil }
            prefix = value
        }
        base = address
        prefixLength = prefix
        description = text
    }

    public func contains(_ address: PeerAddress) -> Bool {
        guard address.length == base.length else { return false }
        func masked(_ word: UInt64, keeping bits: Int) -> UInt64 {
            bits >= 64 ? word : bits <= 0 ? 0 : word & ~(UInt64.max >> UInt64(bits))
        }
        return masked(address.bytes.0, keeping: prefixLength) == masked(base.bytes.0, keeping: prefixLength)
            && masked(address.bytes.1, keeping: prefixLength - 64) == masked(base.bytes.1, keeping: prefixLength - 64)
    }
}

extension PeerAddress {
    /// Dotted IPv4 (`192.0.2.1`) or IPv6 text (`2001:db8::1`, `::ffff:192.0.2.1`), as proxies
    /// write them in `X-Forwarded-For`; nil for anything else.
    public init?(_ text: some StringProtocol) {
        let bytes = Array(text.utf8)
        if let v4 = Self.parseIPv4(bytes[...]) {
            self = v4.withUnsafeBufferPointer { PeerAddress.from($0, count: 4) }
        } else if let v6 = Self.parseIPv6(bytes[...]) {
            self = v6.withUnsafeBufferPointer { PeerAddress.from($0, count: 16) }
        } else {
            return nil
        }
    }

    private static func parseIPv4(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        let parts = text.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            let value = part.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            guard value <= 255 else { return nil }
            out.append(UInt8(value))
        }
        return out
    }

    private static func parseIPv6(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        let colon = UInt8(ascii: ":")
        // Split around a single `::`, each side into groups of up to four hex digits; the last
        // group may be a dotted IPv4 address (two groups' worth).
        var halves: [ArraySlice<UInt8>] = []
        var index = text.startIndex
        var start = index
        while index < text.endIndex {
            if text[index] == colon, index + 1 < text.endIndex, text[index + 1] == colon {
                guard halves.isEmpty else { return nil }
                halves.append(text[start..<index])
                index += 2
                start = index
                continue
            }
            index += 1
        }
        halves.append(text[start...])
        func groups(_ side: ArraySlice<UInt8>, last: Bool) -> [UInt8]? {
            guard !side.isEmpty else { return [] }
            var out: [UInt8] = []
            let pieces = side.split(separator: colon, omittingEmptySubsequences: false)
            for (position, piece) in pieces.enumerated() {
                if last, position == pieces.count - 1, piece.contains(UInt8(ascii: ".")) {
                    guard let v4 = parseIPv4(piece) else { return nil }
                    out += v4
                    continue
                }
                let hex = piece.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || (($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x66) }
                guard hex, (1...4).contains(piece.count), let value = UInt16(String(decoding: piece, as: UTF8.self), radix: 16) else {
                    return nil
                }
                out += [UInt8(value >> 8), UInt8(value & 0xFF)]
            }
            return out
        }
        if halves.count == 1 {
            guard let all = groups(halves[0], last: true), all.count == 16 else { return nil }
            return all
        }
        guard let head = groups(halves[0], last: false), let tail = groups(halves[1], last: true), head.count + tail.count <= 14
        else { return nil }
        return head + [UInt8](repeating: 0, count: 16 - head.count - tail.count) + tail
    }
}
