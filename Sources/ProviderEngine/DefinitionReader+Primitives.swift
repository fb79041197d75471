internal import GatehouseCore

/// The readers of single JSON values that the definition reader builds on: each checks one
/// value's type, records a defect at its path when it is wrong, and never stops the read.
extension DefinitionReader {
    mutating func defect(_ path: String, _ message: String) {
        defects.append(DefinitionDefect(path: path, message: message))
    }

    mutating func object(_ value: JSONValue, at path: String, keys: Set<String>) -> JSONObject? {
        guard let object = value.objectValue else {
            defect(path, "must be an object")
            return nil
        }
        for key in object.keys.sorted() where !keys.contains(key) {
            defect(path + "/" + key, "unknown key")
        }
        return object
    }

    mutating func requiredString(_ value: JSONValue?, at path: String) -> String? {
        guard let value else {
            defect(path, "required")
            return nil
        }
        guard let text = value.stringValue, !text.isEmpty else {
            defect(path, "must be a non-empty string")
            return nil
        }
        return text
    }

    mutating func optionalString(_ value: JSONValue?, at path: String) -> String? {
        optional(value, at: path, \.stringValue, "must be a string")
    }

    mutating func optionalBool(_ value: JSONValue?, at path: String) -> Bool? {
        optional(value, at: path, \.boolValue, "must be true or false")
    }

    /// An absent value is nil without a defect; a present one of the wrong type is a defect.
    private mutating func optional<T>(_ value: JSONValue?, at path: String, _ read: (JSONValue) -> T?, _ expected: String) -> T? {
        guard let value else { return nil }
        guard let read = read(value) else {
            defect(path, expected)
            return nil
        }
        return read
    }

    mutating func optionalURL(_ value: JSONValue?, at path: String, absolute: Bool) -> String? {
        guard let text = optionalString(value, at: path) else { return nil }
        guard text.hasPrefix("https://") || text.hasPrefix("http://") else {
            defect(path, "must be an absolute http(s) URL")
            return nil
        }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }

    mutating func resolve(_ text: String, base: String?, at path: String) -> String? {
        if text.hasPrefix("https://") || text.hasPrefix("http://") { return text }
        if text.hasPrefix("/") {
            guard let base else {
                defect(path, "a relative URL needs the provider's base url")
                return nil
            }
            return base + text
        }
        defect(path, "must be an absolute http(s) URL or a path starting with /")
        return nil
    }

    mutating func stringMap(_ value: JSONValue, at path: String) -> [String: String]? {
        guard let object = value.objectValue else {
            defect(path, "must be an object of strings")
            return nil
        }
        var result: [String: String] = [:]
        for (key, item) in object {
            guard let text = item.stringValue else {
                defect(path + "/" + key, "must be a string")
                continue
            }
            result[key] = text
        }
        return result
    }

    mutating func stringList(_ value: JSONValue, at path: String) -> [String]? {
        guard let items = value.arrayValue else {
            defect(path, "must be a list of strings")
            return nil
        }
        var result: [String] = []
        for (index, item) in items.enumerated() {
            guard let text = item.stringValue else {
                defect(path + "/\(index)", "must be a string")
                continue
            }
            result.append(text)
        }
        return result
    }
}
