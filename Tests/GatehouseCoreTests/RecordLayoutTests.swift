import GatehouseCore
import Testing

@Suite("Record layout")
struct RecordLayoutTests {
    private func written(_ text: String?, _ flag: Bool, _ number: Int64, tail: [UInt8] = []) -> [UInt8] {
        var writer = RecordWriter(layout: 7)
        writer.append(text)
        writer.append(flag)
        writer.append(number)
        writer.append("after")
        writer.appendRemainder(tail)
        return writer.bytes
    }

    @Test("fields read back in order: absent, empty and long strings, flags, integers of every size, the remainder")
    func roundTrip() throws {
        let long = String(repeating: "\u{E9}x", count: 200)
        for text in [nil, "", "a", "caf\u{E9} \u{2603}", long] as [String?] {
            for number in [0, 1, 127, 128, 16_383, 16_384, -1, Int64.min, Int64.max] as [Int64] {
                for flag in [false, true] {
                    var reader = try #require(RecordReader(written(text, flag, number, tail: [0x7B, 0x00]), layout: 7))
                    #expect(reader.string() == text)
                    #expect(reader.flag() == flag)
                    #expect(reader.integer() == number)
                    #expect(reader.requiredString() == "after")
                    #expect(reader.remainder() == [0x7B, 0x00])
                    #expect(reader.finished)
                }
            }
        }
    }

    @Test("another layout byte, a cut at any length, a bad flag or bytes left over are refused, never a trap")
    func damaged() throws {
        let bytes = written("text", true, 300)
        #expect(RecordReader(bytes, layout: 8) == nil)
        #expect(RecordReader([], layout: 7) == nil)
        for length in 1..<bytes.count {
            var reader = try #require(RecordReader(Array(bytes.prefix(length)), layout: 7))
            _ = (reader.string(), reader.flag(), reader.integer(), reader.requiredString())
            #expect(!reader.finished, "cut at \(length)")
        }
        var extra = try #require(RecordReader(bytes + [0], layout: 7))
        _ = (extra.string(), extra.flag(), extra.integer(), extra.requiredString())
        #expect(!extra.finished)
        var badFlag = bytes
        badFlag[6] = 2
        var reader = try #require(RecordReader(badFlag, layout: 7))
        _ = (reader.string(), reader.flag())
        #expect(reader.damaged)
        // A length far beyond the record, and a varint that never ends.
        var huge = try #require(RecordReader([7, 0xFF, 0xFF, 0xFF, 0x0F, 0x41], layout: 7))
        #expect(huge.string() == nil && huge.damaged)
        var endless = try #require(RecordReader([7] + Array(repeating: 0x80, count: 12), layout: 7))
        #expect(endless.integer() == 0 && endless.damaged)
        var missing = try #require(RecordReader([7, 0], layout: 7))
        #expect(missing.requiredString() == "" && missing.damaged, "an absent string where one is required")
    }
}
