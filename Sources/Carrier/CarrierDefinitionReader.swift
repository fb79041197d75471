public import GatehouseCore

/// A problem in a carrier definition: a JSON Pointer (relative to the document the caller
/// gave, usually prefixed with `/native`) and what is wrong there.
public struct CarrierDefect: Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var message: String

    public var description: String { "\(path): \(message)" }
}

/// Reads a `native` block of kind `carrier` strictly: unknown keys, unknown operations,
/// references to undeclared secrets, inputs, bindings or maps are all defects, each reported
/// with its path, so `gatehouse providers validate` shows every problem at once.
public struct CarrierDefinitionReader {
    var defects: [CarrierDefect] = []
    let base: String
    var secretNames: Set<String> = []
    var inputNames: Set<String> = []
    var bindingNames: Set<String> = []
    var mapNames: Set<String> = []

    /// The definition, or every defect found. `base` prefixes every defect path; without
    /// `hasBaseURL` (the provider's `url`) a request URL must be absolute.
    public static func read(_ value: JSONValue, base: String = "/native", hasBaseURL: Bool = true)
        -> Result<CarrierDefinition, CarrierDefinitionFailure>
    {
        var reader = CarrierDefinitionReader(base: base, hasBaseURL: hasBaseURL)
        let definition = reader.definition(value)
        if let definition, reader.defects.isEmpty { return .success(definition) }
        return .failure(CarrierDefinitionFailure(defects: reader.defects))
    }

    let hasBaseURL: Bool

    init(base: String, hasBaseURL: Bool) {
        self.base = base
        self.hasBaseURL = hasBaseURL
    }

    static let topKeys: Set<String> = ["kind", "vendor", "docs", "notes", "secrets", "inputs", "maps", "let", "request", "response"]

    mutating func definition(_ value: JSONValue) -> CarrierDefinition? {
        guard let object = object(value, "", keys: Self.topKeys) else { return nil }
        let vendor = object["vendor"].flatMap { string($0, "/vendor") } ?? "custom"
        _ = object["docs"].flatMap { string($0, "/docs") }
        _ = object["notes"].flatMap { stringList($0, "/notes") }
        let secrets = secretSpecs(object["secrets"])
        let inputs = inputSpecs(object["inputs"])
        var maps: [String: [String: String]] = [:]
        if let value = object["maps"] {
            if let entries = self.object(value, "/maps", keys: nil) {
                for (name, table) in entries {
                    guard let table = self.object(table, "/maps/\(name)", keys: nil) else { continue }
                    var strings: [String: String] = [:]
                    for (key, item) in table {
                        if let text = string(item, "/maps/\(name)/\(key)") { strings[key] = text }
                    }
                    maps[name] = strings
                }
            }
        }
        mapNames = Set(maps.keys)
        var bindings: [NamedValue] = []
        if let list = object["let"] {
            if let items = array(list, "/let") {
                for (index, item) in items.enumerated() {
                    let here = "/let/\(index)"
                    guard let fields = self.object(item, here, keys: ["name", "value"]),
                        let name = requiredString(fields["name"], here + "/name")
                    else { continue }
                    if !Self.isName(name) { defect(here + "/name", "names are letters, digits and '_'") }
                    if name == "secret" || name == "input" || name == "map" { defect(here + "/name", "'\(name)' is reserved") }
                    if let value = self.value(fields["value"], here + "/value") {
                        if value.dependsOnFields { defect(here + "/value", "canonical is only available in request fields and headers") }
                        bindings.append(NamedValue(name: name, value: value))
                    }
                    bindingNames.insert(name)
                }
            }
        }
        let request = object["request"].flatMap { self.request($0) }
        if object["request"] == nil { defect("/request", "required") }
        let response = object["response"].flatMap { self.response($0) }
        if object["response"] == nil { defect("/response", "required") }
        guard let request, let response else { return nil }
        return CarrierDefinition(
            vendor: vendor, secrets: secrets, inputs: inputs, maps: maps, bindings: bindings, request: request, response: response)
    }

    mutating func secretSpecs(_ value: JSONValue?) -> [SecretSpec] {
        guard let value else { return [] }
        guard let items = array(value, "/secrets") else { return [] }
        var specs: [SecretSpec] = []
        for (index, item) in items.enumerated() {
            guard var name = string(item, "/secrets/\(index)") else { continue }
            let optional = name.hasSuffix("?")
            if optional { name.removeLast() }
            guard Self.isName(name) else {
                defect("/secrets/\(index)", "secret names are letters, digits and '_' (a trailing '?' marks an optional one)")
                continue
            }
            specs.append(SecretSpec(name: name, required: !optional))
            secretNames.insert(name)
        }
        return specs
    }

    mutating func inputSpecs(_ value: JSONValue?) -> [InputSpec] {
        guard let value else {
            defect("/inputs", "required (at least the device token)")
            return []
        }
        guard let entries = object(value, "/inputs", keys: nil) else { return [] }
        var specs: [InputSpec] = []
        for name in entries.keys.sorted() {
            let here = "/inputs/\(name)"
            guard Self.isName(name) else {
                defect(here, "input names are letters, digits and '_'")
                continue
            }
            guard let fields = object(entries[name] ?? .null, here, keys: ["required", "maxLength"]) else { continue }
            let required = fields["required"].flatMap { bool($0, here + "/required") } ?? false
            let maxLength = fields["maxLength"].flatMap { integer($0, here + "/maxLength", range: 1...8192) } ?? 4096
            specs.append(InputSpec(name: name, required: required, maxLength: maxLength))
            inputNames.insert(name)
        }
        return specs
    }

    mutating func request(_ value: JSONValue) -> CarrierRequest? {
        guard let object = object(value, "/request", keys: ["method", "url", "query", "headers", "auth", "body", "timeoutMs"]) else {
            return nil
        }
        var method = "POST"
        if let text = object["method"].flatMap({ string($0, "/request/method") }) {
            if ["GET", "POST"].contains(text.uppercased()) { method = text.uppercased() } else {
                defect("/request/method", "must be GET or POST")
            }
        }
        let url = self.value(object["url"], "/request/url")
        if let text = object["url"]?.stringValue, !(text.hasPrefix("https://") || text.hasPrefix("http://") || text.hasPrefix("/")) {
            defect("/request/url", "must be an absolute http(s) URL or a path starting with /")
        } else if let text = object["url"]?.stringValue, text.hasPrefix("/"), !hasBaseURL {
            defect("/request/url", "a relative URL needs the provider's base url")
        }
        let query = namedValues(object["query"], "/request/query")
        let headers = namedValues(object["headers"], "/request/headers")
        var basic: BasicCredentials?
        if let auth = object["auth"], let fields = self.object(auth, "/request/auth", keys: ["type", "user", "password"]) {
            if fields["type"]?.stringValue != "basic" { defect("/request/auth/type", "must be \"basic\"") }
            if let user = self.value(fields["user"], "/request/auth/user"),
                let password = self.value(fields["password"], "/request/auth/password")
            {
                basic = BasicCredentials(user: user, password: password)
            }
        }
        let body = object["body"].flatMap { self.body($0) }
        let timeout = object["timeoutMs"].flatMap { integer($0, "/request/timeoutMs", range: 100...30000) } ?? 5000
        guard let url else { return nil }
        return CarrierRequest(method: method, url: url, query: query, headers: headers, basic: basic, body: body, timeoutMilliseconds: timeout)
    }

    mutating func namedValues(_ value: JSONValue?, _ path: String) -> [NamedValue] {
        guard let value, let entries = object(value, path, keys: nil) else { return [] }
        var result: [NamedValue] = []
        for name in entries.keys.sorted() {
            if let item = self.value(entries[name], path + "/" + name) { result.append(NamedValue(name: name, value: item)) }
        }
        return result
    }

    mutating func body(_ value: JSONValue) -> CarrierBody? {
        guard let object = object(value, "/request/body", keys: ["encoding", "fields", "transforms"]) else { return nil }
        var encoding = BodyEncoding.json
        if let text = object["encoding"].flatMap({ string($0, "/request/body/encoding") }) {
            if let parsed = BodyEncoding(rawValue: text) { encoding = parsed } else {
                defect("/request/body/encoding", "must be json, form or none")
            }
        }
        var fields: [BodyField] = []
        var seen: Set<String> = []
        if let list = object["fields"], let items = array(list, "/request/body/fields") {
            for (index, item) in items.enumerated() {
                let here = "/request/body/fields/\(index)"
                guard let entry = self.object(item, here, keys: ["name", "value", "type", "omitIfEmpty"]),
                    let name = requiredString(entry["name"], here + "/name")
                else { continue }
                if !seen.insert(name).inserted { defect(here + "/name", "duplicate field '\(name)'") }
                var type = FieldType.string
                switch entry["value"] {
                case .bool?: type = .bool
                case .number?: type = .int
                default: break
                }
                if let text = entry["type"].flatMap({ string($0, here + "/type") }) {
                    if let parsed = FieldType(rawValue: text) { type = parsed } else { defect(here + "/type", "must be string, int or bool") }
                }
                let omit = entry["omitIfEmpty"].flatMap { bool($0, here + "/omitIfEmpty") } ?? false
                if let fieldValue = self.value(entry["value"], here + "/value") {
                    fields.append(BodyField(name: name, value: fieldValue, type: type, omitIfEmpty: omit))
                }
            }
        }
        var transforms: [CarrierValue] = []
        if let list = object["transforms"], let items = array(list, "/request/body/transforms") {
            for (index, item) in items.enumerated() {
                if let op = transform(item, "/request/body/transforms/\(index)") { transforms.append(op) }
            }
        }
        return CarrierBody(encoding: encoding, fields: fields, transforms: transforms)
    }

    mutating func response(_ value: JSONValue) -> CarrierResponse? {
        let keys: Set<String> = ["pre", "format", "success", "errorCode", "errorMessage", "errors", "phone"]
        guard let object = object(value, "/response", keys: keys) else { return nil }
        if let format = object["format"].flatMap({ string($0, "/response/format") }), format != "json" {
            defect("/response/format", "only \"json\" is supported")
        }
        var pre: [PreStep] = []
        if let list = object["pre"], let items = array(list, "/response/pre") {
            for (index, item) in items.enumerated() {
                let here = "/response/pre/\(index)"
                guard let step = self.object(item, here, keys: ["when", "ops"]) else { continue }
                let when = step["when"].flatMap { predicate($0, here + "/when") }
                var ops: [CarrierValue] = []
                if let list = step["ops"], let opItems = array(list, here + "/ops") {
                    for (opIndex, op) in opItems.enumerated() {
                        if let parsed = transform(op, here + "/ops/\(opIndex)") { ops.append(parsed) }
                    }
                } else if step["ops"] == nil {
                    defect(here + "/ops", "required")
                }
                pre.append(PreStep(when: when, ops: ops))
            }
        }
        var success: [Predicate] = []
        if let block = object["success"], let fields = self.object(block, "/response/success", keys: ["all"]) {
            if let list = fields["all"], let items = array(list, "/response/success/all") {
                for (index, item) in items.enumerated() {
                    if let parsed = predicate(item, "/response/success/all/\(index)") { success.append(parsed) }
                }
            }
        }
        if success.isEmpty { defect("/response/success", "needs at least one condition in \"all\"") }
        let errorCode = object["errorCode"].flatMap { selector($0, "/response/errorCode") }
        let errorMessage = object["errorMessage"].flatMap { selector($0, "/response/errorMessage") }
        var errors: [String: CarrierErrorClass] = [:]
        if let map = object["errors"], let entries = self.object(map, "/response/errors", keys: nil) {
            for (code, item) in entries {
                guard let text = string(item, "/response/errors/\(code)") else { continue }
                guard let parsed = CarrierErrorClass(rawValue: text), parsed != .transport, parsed != .invalidInput, parsed != .misconfigured
                else {
                    defect("/response/errors/\(code)", "unknown error class '\(text)'")
                    continue
                }
                errors[code] = parsed
            }
        }
        let phone = object["phone"].flatMap { phoneSpec($0) }
        if object["phone"] == nil { defect("/response/phone", "required") }
        guard let phone else { return nil }
        return CarrierResponse(pre: pre, success: success, errorCode: errorCode, errorMessage: errorMessage, errors: errors, phone: phone)
    }

    mutating func phoneSpec(_ value: JSONValue) -> PhoneSpec? {
        guard let object = object(value, "/response/phone", keys: ["path", "ci", "decrypt", "then"]) else { return nil }
        let selector = pathSelector(object, "/response/phone")
        let decrypt = object["decrypt"].flatMap { transform($0, "/response/phone/decrypt") }
        var then: NestedPhone?
        if let nested = object["then"], let fields = self.object(nested, "/response/phone/then", keys: ["op", "require", "path", "ci"]) {
            if fields["op"]?.stringValue != "json" { defect("/response/phone/then/op", "must be \"json\"") }
            var require: [Predicate] = []
            if let list = fields["require"], let items = array(list, "/response/phone/then/require") {
                for (index, item) in items.enumerated() {
                    if let parsed = predicate(item, "/response/phone/then/require/\(index)") { require.append(parsed) }
                }
            }
            if let inner = pathSelector(fields, "/response/phone/then") { then = NestedPhone(require: require, selector: inner) }
        }
        guard let selector else { return nil }
        return PhoneSpec(selector: selector, decrypt: decrypt, then: then)
    }

    mutating func pathSelector(_ object: JSONObject, _ path: String) -> Selector? {
        guard let text = requiredString(object["path"], path + "/path") else { return nil }
        let ci = object["ci"].flatMap { bool($0, path + "/ci") } ?? false
        guard let segments = Self.jsonPath(text) else {
            defect(path + "/path", "must be a path like $.a.b")
            return nil
        }
        return .path(segments, caseInsensitive: ci)
    }

    mutating func selector(_ value: JSONValue, _ path: String) -> Selector? {
        if let text = value.stringValue {
            guard let segments = Self.jsonPath(text) else {
                defect(path, "must be a path like $.a.b, or {\"header\": name}")
                return nil
            }
            return .path(segments, caseInsensitive: false)
        }
        guard let object = object(value, path, keys: ["path", "ci", "header", "status"]) else { return nil }
        if let header = object["header"] {
            return string(header, path + "/header").map { .header($0) }
        }
        if object["status"]?.boolValue == true { return .status }
        return pathSelector(object, path)
    }

    mutating func predicate(_ value: JSONValue, _ path: String) -> Predicate? {
        guard let object = object(value, path, keys: ["path", "ci", "header", "status", "eq", "nonEmpty"]) else { return nil }
        let selector: Selector?
        if let header = object["header"] {
            selector = string(header, path + "/header").map { .header($0) }
        } else if object["status"]?.boolValue == true {
            selector = .status
        } else {
            selector = pathSelector(object, path)
        }
        let test: Predicate.Test?
        if let expected = object["eq"] {
            test = Self.scalarText(expected).map { .equals($0) }
            if test == nil { defect(path + "/eq", "must be a string, number or boolean") }
        } else if object["nonEmpty"]?.boolValue == true {
            test = .nonEmpty
        } else {
            defect(path, "needs \"eq\" or \"nonEmpty\": true")
            test = nil
        }
        guard let selector, let test else { return nil }
        return Predicate(selector: selector, test: test)
    }
}

/// The defects that kept a carrier block from becoming a definition.
public struct CarrierDefinitionFailure: Error, Sendable {
    public var defects: [CarrierDefect]
}

extension Substring {
    var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
