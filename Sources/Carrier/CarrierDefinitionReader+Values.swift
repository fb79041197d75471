internal import GatehouseCore

/// Reading values: templates, literals and operation objects, each checked against the names
/// declared before it (secrets, inputs, maps, earlier `let` bindings).
extension CarrierDefinitionReader {
    /// A value: a template string, a number or boolean literal, or an operation object.
    mutating func value(_ value: JSONValue?, _ path: String, current: Bool = false) -> CarrierValue? {
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
    mutating func transform(_ value: JSONValue, _ path: String) -> CarrierValue? {
        guard let object = value.objectValue, object["op"] != nil else {
            defect(path, "must be an operation object with \"op\"")
            return nil
        }
        return operation(object, path, current: true)
    }

    mutating func operation(_ object: JSONObject, _ path: String, current: Bool) -> CarrierValue? {
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
    mutating func template(_ text: String, _ path: String) -> CarrierValue? {
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

    mutating func reference(_ name: String, _ path: String) -> Reference? {
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
}
