extension [UInt8] {
    /// Bytes from hex digits; whitespace is ignored so vectors can be copied in blocks.
    init(hex: String) {
        let digits = hex.utf8.filter { $0 != 0x20 && $0 != 0x0A }
        var bytes: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let pair = String(decoding: digits[index..<(index + 2)], as: UTF8.self)
            bytes.append(UInt8(pair, radix: 16) ?? 0)
            index += 2
        }
        self = bytes
    }

    /// Lowercase hex.
    var hex: String {
        map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
