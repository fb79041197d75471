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
    private var defects: [CarrierDefect] = []
    private let base: String
    private var secretNames: Set<String> = []
    private var inputNames: Set<String> = []
    private var bindingNames: Set<String> = []
    private var mapNames: Set<String> = []

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

    private let hasBaseURL: Bool

    private init(base: String, hasBaseURL: Bool) {
        self.base = base
        self.hasBaseURL = hasBaseURL
    }

    static let topKeys: Set<String> = ["kind", "vendor", "docs", "notes", "secrets", "inputs", "maps", "let", "request", "response"]

    private mutating func definition(_ value: JSONValue) -> CarrierDefinition? {
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

    private mutating func secretSpecs(_ value: JSONValue?) -> [SecretSpec] {
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

    private mutating func inputSpecs(_ value: JSONValue?) -> [InputSpec] {
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

    private mutating func request(_ value: JSONValue) -> CarrierRequest? {
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

    private mutating func namedValues(_ value: JSONValue?, _ path: String) -> [NamedValue] {
        guard let value, let entries = object(value, path, keys: nil) else { return [] }
        var result: [NamedValue] = []
        for name in entries.keys.sorted() {
            if let item = self.value(entries[name], path + "/" + name) { result.append(NamedValue(name: name, value: item)) }
        }
        return result
    }

    private mutating func body(_ value: JSONValue) -> CarrierBody? {
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

    private mutating func response(_ value: JSONValue) -> CarrierResponse? {
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

    private mutating func phoneSpec(_ value: JSONValue) -> PhoneSpec? {
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

    private mutating func pathSelector(_ object: [String: JSONValue], _ path: String) -> Selector? {
        guard let text = requiredString(object["path"], path + "/path") else { return nil }
        let ci = object["ci"].flatMap { bool($0, path + "/ci") } ?? false
        guard let segments = Self.jsonPath(text) else {
            defect(path + "/path", "must be a path like $.a.b")
            return nil
        }
        return .path(segments, caseInsensitive: ci)
    }

    private mutating func selector(_ value: JSONValue, _ path: String) -> Selector? {
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

    private mutating func predicate(_ value: JSONValue, _ path: String) -> Predicate? {
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

    // MARK: Values

    /// A value: a template string, a number or boolean literal, or an operation object.
    private mutating func value(_ value: JSONValue?, _ path: String, current: Bool = false) -> CarrierValue? {
        guard let value else {
            defect(path, "required")
            return nil
        }
        switch value {
        case .string(let text): return template(text, path)
        case .number, .bool: return Self.scalarText(value).map { .literal($0) }
        case .object(let object): return operation(object, path, current: current)
        default:
            defect(path, "must be a string, number, boolean or operation object")
            return nil
        }
    }

    /// A body transform or decrypt step: an operation whose input defaults to the bytes at hand.
    private mutating func transform(_ value: JSONValue, _ path: String) -> CarrierValue? {
        guard let object = value.objectValue, object["op"] != nil else {
            defect(path, "must be an operation object with \"op\"")
            return nil
        }
        return operation(object, path, current: true)
    }

    private mutating func operation(_ object: [String: JSONValue], _ path: String, current: Bool) -> CarrierValue? {
        // Byte sources without "op" (key material): {"utf8": …}, {"hex": …}, {"base64": …},
        // {"md5hex": …}, {"slice": {…}}, {"pad": {…}}.
        if object["op"] == nil {
            guard object.count == 1, let (kind, inner) = object.first else {
                defect(path, "an object value needs \"op\", or exactly one of utf8, hex, base64, md5hex, slice, pad")
                return nil
            }
            switch kind {
            case "utf8": return self.value(inner, path + "/utf8")
            case "hex": return self.value(inner, path + "/hex").map { .decode($0, .hex) }
            case "base64": return self.value(inner, path + "/base64").map { .decode($0, .base64) }
            case "md5hex": return self.value(inner, path + "/md5hex").map { .md5Hex($0) }
            case "slice":
                guard let fields = self.object(inner, path + "/slice", keys: ["of", "from", "to"]),
                    let of = self.value(fields["of"], path + "/slice/of"),
                    let from = integer(fields["from"] ?? .number(0), path + "/slice/from", range: 0...4096),
                    let to = requiredInteger(fields["to"], path + "/slice/to", range: 1...4096)
                else { return nil }
                if from >= to { defect(path + "/slice", "from must be below to") }
                return .slice(of, from: from, to: to)
            case "pad":
                guard let fields = self.object(inner, path + "/pad", keys: ["of", "len", "with"]),
                    let of = self.value(fields["of"], path + "/pad/of"),
                    let length = requiredInteger(fields["len"], path + "/pad/len", range: 1...4096)
                else { return nil }
                var byte: UInt8 = 0
                if let with = fields["with"].flatMap({ string($0, path + "/pad/with") }) {
                    if with.utf8.count == 1, let first = with.utf8.first { byte = first } else { defect(path + "/pad/with", "must be one ASCII character") }
                }
                return .pad(of, length: length, byte: byte)
            default:
                defect(path + "/" + kind, "unknown byte source")
                return nil
            }
        }
        guard let op = string(object["op"] ?? .null, path + "/op") else { return nil }
        func keys(_ allowed: Set<String>) -> Bool {
            var ok = true
            for key in object.keys.sorted() where key != "op" && !allowed.contains(key) {
                defect(path + "/" + key, "unknown key for \(op)")
                ok = false
            }
            return ok
        }
        /// The operation's input: explicit, or the bytes at hand in a transform.
        func input(_ name: String) -> CarrierValue? {
            if object[name] == nil, current { return .current }
            return self.value(object[name], path + "/" + name)
        }
        func encoding(_ name: String, default fallback: ByteEncoding) -> ByteEncoding {
            guard let text = object[name].flatMap({ string($0, path + "/" + name) }) else { return fallback }
            guard let parsed = ByteEncoding(rawValue: text) else {
                defect(path + "/" + name, "must be raw, hex, HEX or base64")
                return fallback
            }
            return parsed
        }
        func digest() -> DigestName? {
            guard let text = requiredString(object["alg"], path + "/alg") else { return nil }
            guard let parsed = DigestName(rawValue: text) else {
                defect(path + "/alg", "must be md5, sha1 or sha256")
                return nil
            }
            return parsed
        }
        switch op {
        case "now":
            guard keys(["unit", "format", "tz"]) else { return nil }
            if let format = object["format"].flatMap({ string($0, path + "/format") }) {
                if format == "iso8601z" { return .now(.iso8601) }
                guard format == "yyyyMMddHHmmssSSS" else {
                    defect(path + "/format", "must be yyyyMMddHHmmssSSS or iso8601z")
                    return nil
                }
                let zone = object["tz"].flatMap { string($0, path + "/tz") } ?? "UTC"
                guard let offset = Self.offsetMinutes(zone) else {
                    defect(path + "/tz", "must be UTC, Asia/Shanghai or an offset like +08:00")
                    return nil
                }
                return .now(.compact(offsetMinutes: offset))
            }
            switch object["unit"].flatMap({ string($0, path + "/unit") }) ?? "ms" {
            case "ms": return .now(.epochMilliseconds)
            case "s": return .now(.epochSeconds)
            default:
                defect(path + "/unit", "must be ms or s")
                return nil
            }
        case "uuid":
            guard keys([]) else { return nil }
            return .uuid
        case "random":
            guard keys(["charset", "len"]) else { return nil }
            let charsetText = object["charset"].flatMap { string($0, path + "/charset") } ?? "alnum"
            guard let charset = RandomCharset(rawValue: charsetText) else {
                defect(path + "/charset", "must be digits, alnum or hex")
                return nil
            }
            guard let length = requiredInteger(object["len"], path + "/len", range: 1...128) else { return nil }
            return .random(charset, length: length)
        case "concat":
            guard keys(["parts"]), let list = object["parts"].flatMap({ array($0, path + "/parts") }) else { return nil }
            let parts = list.enumerated().compactMap { self.value($0.element, path + "/parts/\($0.offset)", current: current) }
            return parts.count == list.count ? .concat(parts) : nil
        case "canonical":
            guard keys(["source", "exclude", "sort", "pair", "sep", "encode", "includeEmpty", "prefix", "suffix"]) else { return nil }
            let sourceText = object["source"].flatMap { string($0, path + "/source") } ?? "body"
            guard let source = Canonical.Source(rawValue: sourceText) else {
                defect(path + "/source", "must be body or query")
                return nil
            }
            let exclude = object["exclude"].flatMap { stringList($0, path + "/exclude") } ?? []
            let sort = object["sort"].flatMap { string($0, path + "/sort") } ?? "ascii"
            if sort != "ascii" && sort != "none" { defect(path + "/sort", "must be ascii or none") }
            let pair = object["pair"].flatMap { string($0, path + "/pair") } ?? "{k}={v}"
            let separator = object["sep"].flatMap { string($0, path + "/sep") } ?? "&"
            let encode = object["encode"].flatMap { string($0, path + "/encode") } ?? "none"
            if encode != "none" && encode != "rfc3986" { defect(path + "/encode", "must be none or rfc3986") }
            let includeEmpty = object["includeEmpty"].flatMap { bool($0, path + "/includeEmpty") } ?? true
            let prefix = object["prefix"].flatMap { self.value($0, path + "/prefix") }
            let suffix = object["suffix"].flatMap { self.value($0, path + "/suffix") }
            return .canonical(Canonical(
                source: source, exclude: Set(exclude), sorted: sort == "ascii", pair: pair, separator: separator,
                percentEncode: encode == "rfc3986", includeEmpty: includeEmpty, prefix: prefix, suffix: suffix))
        case "percent":
            guard keys(["of"]), let of = input("of") else { return nil }
            return .percent(of)
        case "hash":
            guard keys(["alg", "msg", "out"]), let alg = digest(), let message = input("msg") else { return nil }
            return .hash(alg, message: message, output: encoding("out", default: .hex))
        case "hmac":
            guard keys(["alg", "key", "msg", "out"]), let alg = digest(), let key = self.value(object["key"], path + "/key"),
                let message = input("msg")
            else { return nil }
            return .hmac(alg, key: key, message: message, output: encoding("out", default: .hex))
        case "aes", "des", "3des":
            guard keys(["mode", "dir", "key", "iv", "padding", "in", "out", "of"]) else { return nil }
            let mode = object["mode"].flatMap { string($0, path + "/mode") } ?? "cbc"
            if mode != "cbc" && mode != "ecb" { defect(path + "/mode", "must be cbc or ecb") }
            let direction = object["dir"].flatMap { string($0, path + "/dir") } ?? "dec"
            if direction != "enc" && direction != "dec" { defect(path + "/dir", "must be enc or dec") }
            if let padding = object["padding"].flatMap({ string($0, path + "/padding") }), padding != "pkcs7", padding != "pkcs5" {
                defect(path + "/padding", "only pkcs7 (pkcs5) padding is supported")
            }
            guard let key = self.value(object["key"], path + "/key"), let of = input("of") else { return nil }
            let iv = object["iv"].flatMap { self.value($0, path + "/iv") }
            if mode == "cbc", iv == nil { defect(path + "/iv", "required in cbc mode") }
            return .cipher(CipherOperation(
                algorithm: CipherOperation.Algorithm(rawValue: op) ?? .aes, cbc: mode == "cbc", decrypting: direction == "dec",
                key: key, iv: iv, input: of, inputEncoding: encoding("in", default: .raw), outputEncoding: encoding("out", default: .raw)))
        case "rsa_decrypt", "rsa_encrypt", "rsa_sign":
            guard keys(["keyPem", "padding", "in", "out", "of", "msg", "alg"]) else { return nil }
            if let padding = object["padding"].flatMap({ string($0, path + "/padding") }), padding != "pkcs1" {
                defect(path + "/padding", "only pkcs1 (v1.5) is supported")
            }
            let alg = object["alg"].flatMap { string($0, path + "/alg") } ?? "sha256"
            if alg != "sha256" && alg != "sha1" { defect(path + "/alg", "must be sha256 or sha1") }
            guard let pem = self.value(object["keyPem"], path + "/keyPem"), let of = input(op == "rsa_sign" ? "msg" : "of") else {
                return nil
            }
            return .rsa(RSAOperation(
                kind: RSAOperation.Kind(rawValue: op) ?? .decrypt, keyPEM: pem, input: of, inputEncoding: encoding("in", default: .raw),
                outputEncoding: encoding("out", default: op == "rsa_sign" ? .base64 : .raw), sha1: alg == "sha1"))
        case "basic":
            guard keys(["user", "password"]), let user = self.value(object["user"], path + "/user"),
                let password = self.value(object["password"], path + "/password")
            else { return nil }
            return .basic(user: user, password: password)
        case "gzip":
            guard keys(["of"]), let of = input("of") else { return nil }
            return .gzip(of)
        case "gunzip":
            guard keys(["of", "ifMagic"]), let of = input("of") else { return nil }
            return .gunzip(of, ifMagic: object["ifMagic"].flatMap { bool($0, path + "/ifMagic") } ?? false)
        case "encode", "decode":
            guard keys(["of", "as"]), let of = input("of") else { return nil }
            let kind = encoding("as", default: .base64)
            return op == "encode" ? .encode(of, kind) : .decode(of, kind)
        default:
            defect(path + "/op", "unknown operation '\(op)'")
            return nil
        }
    }

    /// `{{secret.x}}`, `{{input.x}}`, `{{name}}` (a binding) and `{{map.m[reference]}}`.
    private mutating func template(_ text: String, _ path: String) -> CarrierValue? {
        guard text.contains("{{") else { return .literal(text) }
        var parts: [TemplatePart] = []
        var rest = Substring(text)
        while let open = rest.firstRange(of: "{{") {
            if open.lowerBound > rest.startIndex { parts.append(.text(String(rest[..<open.lowerBound]))) }
            guard let close = rest[open.upperBound...].firstRange(of: "}}") else {
                defect(path, "unclosed {{")
                return nil
            }
            let name = rest[open.upperBound..<close.lowerBound].trimmingSpaces
            guard let reference = reference(String(name), path) else { return nil }
            parts.append(.reference(reference))
            rest = rest[close.upperBound...]
        }
        if !rest.isEmpty { parts.append(.text(String(rest))) }
        return .template(parts)
    }

    private mutating func reference(_ name: String, _ path: String) -> Reference? {
        if name.hasPrefix("map.") {
            let body = name.dropFirst(4)
            guard let open = body.firstIndex(of: "["), body.hasSuffix("]") else {
                defect(path, "{{\(name)}}: maps are used as map.NAME[reference]")
                return nil
            }
            let mapName = String(body[..<open])
            let key = String(body[body.index(after: open)..<body.index(before: body.endIndex)])
            if !mapNames.contains(mapName) { defect(path, "{{\(name)}}: no map '\(mapName)' in /maps") }
            return reference(key, path).map { .map(mapName, key: $0) }
        }
        if name.hasPrefix("secret.") {
            let secret = String(name.dropFirst(7))
            if !secretNames.contains(secret) { defect(path, "{{\(name)}}: '\(secret)' is not in /secrets") }
            return .secret(secret)
        }
        if name.hasPrefix("input.") {
            let input = String(name.dropFirst(6))
            if !inputNames.contains(input) { defect(path, "{{\(name)}}: '\(input)' is not in /inputs") }
            return .input(input)
        }
        guard bindingNames.contains(name) else {
            defect(path, "{{\(name)}}: not a secret.*, input.*, map.* or an earlier let binding")
            return nil
        }
        return .binding(name)
    }

    // MARK: Primitive readers

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

    private mutating func defect(_ path: String, _ message: String) {
        defects.append(CarrierDefect(path: base + path, message: message))
    }

    private mutating func object(_ value: JSONValue, _ path: String, keys: Set<String>?) -> [String: JSONValue]? {
        guard let object = value.objectValue else {
            defect(path, "must be an object")
            return nil
        }
        if let keys {
            for key in object.keys.sorted() where !keys.contains(key) { defect(path + "/" + key, "unknown key") }
        }
        return object
    }

    private mutating func array(_ value: JSONValue, _ path: String) -> [JSONValue]? {
        guard let items = value.arrayValue else {
            defect(path, "must be a list")
            return nil
        }
        return items
    }

    private mutating func string(_ value: JSONValue, _ path: String) -> String? {
        guard let text = value.stringValue else {
            defect(path, "must be a string")
            return nil
        }
        return text
    }

    private mutating func requiredString(_ value: JSONValue?, _ path: String) -> String? {
        guard let value else {
            defect(path, "required")
            return nil
        }
        return string(value, path)
    }

    private mutating func stringList(_ value: JSONValue, _ path: String) -> [String]? {
        guard let items = array(value, path) else { return nil }
        return items.enumerated().compactMap { string($0.element, path + "/\($0.offset)") }
    }

    private mutating func bool(_ value: JSONValue, _ path: String) -> Bool? {
        guard let flag = value.boolValue else {
            defect(path, "must be true or false")
            return nil
        }
        return flag
    }

    private mutating func integer(_ value: JSONValue, _ path: String, range: ClosedRange<Int>) -> Int? {
        guard case .number(let number) = value, number.rounded() == number, number >= Double(range.lowerBound),
            number <= Double(range.upperBound)
        else {
            defect(path, "must be an integer in \(range.lowerBound)...\(range.upperBound)")
            return nil
        }
        return Int(number)
    }

    private mutating func requiredInteger(_ value: JSONValue?, _ path: String, range: ClosedRange<Int>) -> Int? {
        guard let value else {
            defect(path, "required")
            return nil
        }
        return integer(value, path, range: range)
    }
}

/// The defects that kept a carrier block from becoming a definition.
public struct CarrierDefinitionFailure: Error, Sendable {
    public var defects: [CarrierDefect]
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}
