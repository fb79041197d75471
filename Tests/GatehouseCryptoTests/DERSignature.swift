/// A deliberately separate DER `ECDSA-Sig-Value` codec for the tests, so the library's
/// OpenSSL-based conversion is checked against something it does not share code with.
enum DERSignature {
    /// DER for the fixed-width `r ‖ s` form.
    static func encode(raw: [UInt8]) -> [UInt8] {
        let half = raw.count / 2
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[..<half]) + integer(raw[half...])
        let length: [UInt8] = body.count < 128 ? [UInt8(body.count)] : [0x81, UInt8(body.count)]
        return [0x30] + length + body
    }

    /// The fixed-width form of a DER signature, or nil if it does not parse.
    static func decode(der: [UInt8], coordinateSize: Int) -> [UInt8]? {
        var index = 0
        func byte() -> UInt8? {
            guard index < der.count else { return nil }
            defer { index += 1 }
            return der[index]
        }
        guard byte() == 0x30, var length = byte().map(Int.init) else { return nil }
        if length == 0x81 { length = byte().map(Int.init) ?? -1 }
        guard length == der.count - index else { return nil }
        var out: [UInt8] = []
        for _ in 0..<2 {
            guard byte() == 0x02, let count = byte().map(Int.init), index + count <= der.count else { return nil }
            let value = der[index..<(index + count)].drop { $0 == 0 }
            index += count
            guard value.count <= coordinateSize else { return nil }
            out += [UInt8](repeating: 0, count: coordinateSize - value.count) + value
        }
        return index == der.count ? out : nil
    }
}
