internal import GatehouseCore

/// The small readers every block uses: typed members with a defect for each mismatch.
extension CarrierDefinitionReader {
    static func isName(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64
            && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F }
    }

    /// `$.a.b` → ["a", "b"]; `$` alone is the whole document.
    static func jsonPath(_ text: String) -> [String]? {
        guard text == "$" || text.hasPrefix("$.") else { return nil }
        let segments = text.dropFirst(2).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        if text == "$" { return [] }
        return segments.contains(where: \.isEmpty) ? nil : segments
    }

    static func offsetMinutes(_ zone: String) -> Int? {
        switch zone {
        case "UTC", "Z": return 0
        case "Asia/Shanghai", "Asia/Chongqing", "PRC": return 480
        default:
            let bytes = Array(zone.utf8)
            guard bytes.count == 6, bytes[0] == UInt8(ascii: "+") || bytes[0] == UInt8(ascii: "-"), bytes[3] == UInt8(ascii: ":"),
                let hours = Int(String(decoding: bytes[1..<3], as: UTF8.self)),
                let minutes = Int(String(decoding: bytes[4..<6], as: UTF8.self)), hours <= 14, minutes < 60
            else { return nil }
            return (hours * 60 + minutes) * (bytes[0] == UInt8(ascii: "-") ? -1 : 1)
        }
    }

    /// A JSON scalar as the text loose comparison uses: integers without a fraction.
    static func scalarText(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): return text
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number):
            if number.rounded() == number, abs(number) < 9.0e15 { return String(Int64(number)) }
            return String(number)
        default: return nil
        }
    }

    mutating func defect(_ path: String, _ message: String) {
        defects.append(CarrierDefect(path: base + path, message: message))
    }

    mutating func object(_ value: JSONValue, _ path: String, keys: Set<String>?) -> JSONObject? {
        guard let object = value.objectValue else {
            defect(path, "must be an object")
            return nil
        }
        if let keys {
            for key in object.keys.sorted() where !keys.contains(key) { defect(path + "/" + key, "unknown key") }
        }
        return object
    }

    mutating func array(_ value: JSONValue, _ path: String) -> [JSONValue]? {
        guard let items = value.arrayValue else {
            defect(path, "must be a list")
            return nil
        }
        return items
    }

    mutating func string(_ value: JSONValue, _ path: String) -> String? {
        guard let text = value.stringValue else {
            defect(path, "must be a string")
            return nil
        }
        return text
    }

    mutating func requiredString(_ value: JSONValue?, _ path: String) -> String? {
        guard let value else {
            defect(path, "required")
            return nil
        }
        return string(value, path)
    }

    mutating func stringList(_ value: JSONValue, _ path: String) -> [String]? {
        guard let items = array(value, path) else { return nil }
        return items.enumerated().compactMap { string($0.element, path + "/\($0.offset)") }
    }

    mutating func bool(_ value: JSONValue, _ path: String) -> Bool? {
        guard let flag = value.boolValue else {
            defect(path, "must be true or false")
            return nil
        }
        return flag
    }

    mutating func integer(_ value: JSONValue, _ path: String, range: ClosedRange<Int>) -> Int? {
        guard case .number(let number) = value, number.rounded() == number, number >= Double(range.lowerBound),
            number <= Double(range.upperBound)
        else {
            defect(path, "must be an integer in \(range.lowerBound)...\(range.upperBound)")
            return nil
        }
        return Int(number)
    }

    mutating func requiredInteger(_ value: JSONValue?, _ path: String, range: ClosedRange<Int>) -> Int? {
        guard let value else {
            defect(path, "required")
            return nil
        }
        return integer(value, path, range: range)
    }
}
