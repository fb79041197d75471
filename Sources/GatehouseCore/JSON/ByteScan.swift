/// Sixteen-byte strides over the plain runs JSON text is mostly made of (a token's base64url, a
/// URL), so the per-byte loops after them only look at what ends a run. Each stride compares
/// all sixteen bytes at once (SSE2 on x86-64, NEON on arm64), which is exact for "is there any
/// such byte". Every comparison takes a whole vector on both sides: the overloads with a
/// scalar on the right are generic and compile to a loop over the lanes.
public enum ByteScan {
    private typealias Stride = SIMD16<UInt8>
    private static let width = Stride.scalarCount

    @inline(__always)
    private static func splat(_ byte: UInt8) -> Stride { Stride(repeating: byte) }

    /// Whether any lane is set. The standard library's `any` reduces the lanes through a
    /// generic `min()` that is not specialised here: a call and a loop on every stride. The
    /// sixteen one-byte lanes are read as two words instead.
    @inline(__always)
    private static func anySet(_ mask: SIMDMask<SIMD16<Int8>>) -> Bool {
        let words = unsafeBitCast(mask, to: SIMD2<UInt64>.self)
        return words[0] | words[1] != 0
    }

    /// The offset of the first `byte` at or after `start`, or nil. Compact JWS parsing looks
    /// for its dots this way: a token is a kilobyte of base64url with two of them.
    public static func firstIndex(of byte: UInt8, in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = UnsafeRawPointer(bytes.baseAddress) else { return nil }
        let target = splat(byte)
        var index = start
        while bytes.count - index >= width, !anySet(base.loadUnaligned(fromByteOffset: index, as: Stride.self) .== target) {
            index += width
        }
        while index < bytes.count {
            if bytes[index] == byte { return index }
            index += 1
        }
        return nil
    }

    /// The lanes holding a byte that ends or escapes a JSON string: a control character, `"`
    /// or `\`.
    @inline(__always)
    private static func endsPlainString(_ chunk: Stride) -> SIMDMask<SIMD16<Int8>> {
        chunk .< splat(0x20) .| chunk .== splat(0x22) .| chunk .== splat(0x5C)
    }

    /// Advances `index` over bytes that cannot end or escape inside a JSON string (no `"`,
    /// `\`, or control character), whole strides only. Returns the OR of the bytes passed,
    /// whose top bit says whether the run held anything but ASCII.
    @inline(__always)
    static func skipPlainString(_ bytes: UnsafeBufferPointer<UInt8>, from index: inout Int) -> UInt8 {
        guard let base = UnsafeRawPointer(bytes.baseAddress) else { return 0 }
        var seen = Stride()
        while bytes.count - index >= width {
            let chunk = base.loadUnaligned(fromByteOffset: index, as: Stride.self)
            guard !anySet(endsPlainString(chunk)) else { break }
            seen |= chunk
            index += width
        }
        let words = unsafeBitCast(seen, to: SIMD2<UInt64>.self)
        return (words[0] | words[1]) & 0x8080_8080_8080_8080 == 0 ? 0 : 0x80
    }

    /// The offset of the first byte at or after `start` that `JSONString` cannot copy
    /// unchanged (see `needsQuoting`), or `bytes.count`. The last few bytes, and strings
    /// shorter than a stride (most keys and values), take one stride too: copied into a
    /// zeroed vector, with the lanes past the end masked off.
    @inline(__always)
    static func quotingStop(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = UnsafeRawPointer(bytes.baseAddress) else { return bytes.count }
        var index = start
        while bytes.count - index >= width {
            let lanes = laneBits(needsQuoting(base.loadUnaligned(fromByteOffset: index, as: Stride.self)))
            if lanes != (0, 0) { return index + firstLane(lanes) }
            index += width
        }
        let remaining = bytes.count - index
        guard remaining > 0 else { return bytes.count }
        var tail = Stride()
        withUnsafeMutableBytes(of: &tail) { $0.copyMemory(from: UnsafeRawBufferPointer(start: base + index, count: remaining)) }
        var lanes = laneBits(needsQuoting(tail))
        // Lanes past the end hold zeros, which read as control characters.
        if remaining < 8 {
            lanes = (lanes.0 & (UInt64(1) << (remaining * 8) &- 1), 0)
        } else {
            lanes.1 &= remaining == 8 ? 0 : UInt64(1) << ((remaining - 8) * 8) &- 1
        }
        return lanes == (0, 0) ? bytes.count : index + firstLane(lanes)
    }

    /// Lanes holding what a quoted string cannot carry as it is: what ends a plain string, and
    /// `<`, `>`, `&` and 0xE2 (the lead byte of U+2028/U+2029).
    @inline(__always)
    private static func needsQuoting(_ chunk: Stride) -> SIMDMask<SIMD16<Int8>> {
        endsPlainString(chunk) .| chunk .== splat(0x3C) .| chunk .== splat(0x3E) .| chunk .== splat(0x26) .| chunk .== splat(0xE2)
    }

    /// The mask's lanes as two words, lane 0 in the low byte of the first.
    @inline(__always)
    private static func laneBits(_ mask: SIMDMask<SIMD16<Int8>>) -> (UInt64, UInt64) {
        let words = unsafeBitCast(mask, to: SIMD2<UInt64>.self)
        return (words[0], words[1])
    }

    @inline(__always)
    private static func firstLane(_ lanes: (UInt64, UInt64)) -> Int {
        lanes.0 != 0 ? lanes.0.trailingZeroBitCount / 8 : 8 + lanes.1.trailingZeroBitCount / 8
    }
}
