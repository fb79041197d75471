internal import FoundationEssentials

/// JSON in and out of byte arrays, so that no module needs Foundation's `Data` in its API.
public enum JSONCoding {
    /// Decodes `T` from UTF-8 JSON bytes.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try JSONDecoder().decode(type, from: Data(bytes))
    }

    /// Encodes `value` as compact JSON with sorted keys, so output is stable across runs.
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    /// Encodes `value` as indented JSON for people reading a terminal.
    public static func encodePretty<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        return Array(try encoder.encode(value))
    }
}
