import GatehouseCore
import GatehouseTestSupport
import Testing

@Suite("JSON objects")
struct JSONObjectTests {
    /// `{"<stem>0":0,…}` with `count` members, as text.
    private static func text(_ stem: String, members count: Int, repeating repeated: Int? = nil) -> String {
        var names = (0..<count).map { "\(stem)\($0)" }
        if let repeated { names.append("\(stem)\(repeated)") }
        return "{" + names.enumerated().map { #""\#($0.element)":\#($0.offset)"# }.joined(separator: ",") + "}"
    }

    @Test("small and indexed objects find every member and refuse a repeated name at any position",
          arguments: ["k", "six___", "eight_by", "identity_token_", String(repeating: "x", count: 300)])
    func sizes(stem: String) throws {
        // Short names; names of seven to nine bytes, either side of what a member's probe holds;
        // names whose first eight bytes are all alike, and longer ones sharing them; names
        // longer than the 255 bytes a probe can count, of several lengths.
        for count in [1, 2, 11, 12, 13, 14, 40, 300] {
            let parsed = try #require(JSONValue.parse(Self.text(stem, members: count)), "\(count) members")
            let object = try #require(parsed.objectValue)
            #expect(object.count == count)
            for member in 0..<count {
                #expect(object["\(stem)\(member)"] == .number(Double(member)), "\(stem)\(member) of \(count)")
            }
            #expect(object["\(stem)\(count)"] == nil)
            #expect(object[stem] == nil)
            #expect(object["\(stem)0x"] == nil)
            for repeated in Set([0, count / 2, count - 1]) {
                #expect(JSONValue.parse(Self.text(stem, members: count, repeating: repeated)) == nil, "\(stem)\(repeated) twice")
            }
        }
    }

    @Test("names are told apart by their bytes, not by Unicode canonical equivalence")
    func byteExactNames() throws {
        // "é" precomposed and decomposed: equal as Swift strings, different members in JSON.
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed)
        for padding in [0, 20] {
            var object = JSONObject()
            for index in 0..<padding { object["p\(index)"] = .null }
            object[composed] = 1
            object[decomposed] = 2
            #expect(object.count == padding + 2)
            #expect(object[composed] == 1)
            #expect(object[decomposed] == 2)
            let text = "{" + (0..<padding).map { #""p\#($0)":null,"# }.joined() + #""\#(composed)":1,"\#(decomposed)":2}"#
            #expect(JSONValue.parse(text)?.objectValue == object, "\(padding) other members")
        }
    }

    @Test("setting, replacing and removing keep lookups right across the index threshold")
    func mutation() {
        var object = JSONObject()
        var reference: [String: JSONValue] = [:]
        var generator = SeededGenerator(seed: 7)
        for step in 0..<2_000 {
            let name = "n\(generator.next() % 40)"
            let value: JSONValue? = generator.next() % 4 == 0 ? nil : .number(Double(step))
            object[name] = value
            reference[name] = value
            if step % 50 == 0 || object.count == 12 || object.count == 13 {
                #expect(object.count == reference.count)
                for index in 0..<40 { #expect(object["n\(index)"] == reference["n\(index)"], "n\(index) at step \(step)") }
            }
        }
        #expect(object == JSONObject(reference))
    }

    @Test("equality and hashing ignore member order; a dictionary literal's last repeat wins")
    func equality() {
        let forward: JSONObject = ["a": 1, "b": [1, 2], "c": ["d": "e"]]
        let backward: JSONObject = ["c": ["d": "e"], "b": [1, 2], "a": 1]
        #expect(forward == backward)
        #expect(Set([JSONValue.object(forward), .object(backward)]).count == 1)
        #expect(forward != ["a": 1, "b": [1, 2]])
        #expect(forward != ["a": 1, "b": [2, 1], "c": ["d": "e"]])
        let repeated: JSONObject = ["a": 1, "a": 2]
        #expect(repeated.count == 1 && repeated["a"] == 2)
        #expect(JSONValue.object(backward).jsonText == #"{"a":1,"b":[1,2],"c":{"d":"e"}}"#)
        #expect(JSONObject(strings: ["x": "1", "y": ""]) == ["y": "", "x": "1"])
        #expect(JSONObject(["x": 1, "y": [true]]) == ["y": [true], "x": 1])
    }
}
