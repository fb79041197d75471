internal import GatehouseCore

/// Reads a `profile` block strictly, like the rest of a definition: every defect with its
/// JSON Pointer, unknown keys included.
struct ProfileReader {
    private(set) var defects: [DefinitionDefect] = []
    /// What relative step URLs (`/me`) are resolved against: the provider's API base.
    let base: String?
    /// The request endpoint lists `hosts`, so a step may take its origin from a flow value,
    /// checked against them when the step runs.
    let learnsHost: Bool

    private static let blockKeys: Set<String> = ["url", "fetch", "document", "fields", "email_verified"]
    private static let stepKeys: Set<String> = ["url", "method", "query", "headers", "export", "optional", "token_invalid", "body", "format"]
    /// Each operator with the modifier keys it accepts.
    private static let operators: [String: Set<String>] = [
        "path": [], "value": [], "first": [], "join": ["separator"], "template": [], "map": ["from", "default"],
        "date": ["from"], "string": [], "boolean": [], "split": ["from", "index", "rest"], "find": ["where", "then"], "object": [],
    ]

    init(base: String?, learnsHost: Bool = false) {
        self.base = base
        self.learnsHost = learnsHost
    }

    mutating func mapping(_ value: JSONValue, at path: String) -> ProfileMapping? {
        guard let object = value.objectValue else {
            defect(path, "must be an object")
            return nil
        }
        for key in object.keys.sorted() where !Self.blockKeys.contains(key) { defect(path + "/" + key, "unknown key") }
        var steps: [ProfileStep] = []
        if let url = object["url"] {
            if object["fetch"] != nil { defect(path + "/url", "use either url or fetch, not both") }
            if let resolved = stepURL(url, at: path + "/url") { steps = [ProfileStep(url: resolved)] }
        } else if let fetch = object["fetch"] {
            if let items = fetch.arrayValue, !items.isEmpty {
                steps = items.enumerated().compactMap { step($0.element, at: path + "/fetch/\($0.offset)") }
            } else {
                defect(path + "/fetch", "must be a non-empty list of steps")
            }
        }
        var document: Int?
        if let value = object["document"] {
            if case .number(let number) = value, number.rounded() == number, number >= 0, Int(number) < max(steps.count, 1) {
                document = Int(number)
            } else {
                defect(path + "/document", "must be the index of a fetch step")
            }
        }
        var fields: [String: ProfileExpression] = [:]
        if let members = object["fields"]?.objectValue {
            for (name, spec) in members.sorted(by: { $0.key < $1.key }) {
                if name == "raw" || name == "email_verified" {
                    defect(path + "/fields/" + name, name == "raw" ? "raw is always the provider's body" : "set email_verified at the profile's top level")
                    continue
                }
                if let expression = expression(spec, at: path + "/fields/" + name) { fields[name] = expression }
            }
        } else {
            defect(path + "/fields", object["fields"] == nil ? "required" : "must be an object")
        }
        var policy = EmailVerifiedPolicy.never
        if let value = object["email_verified"] {
            switch value {
            case .bool(let flag): policy = flag ? .always : .never
            default: if let expression = expression(value, at: path + "/email_verified") { policy = .expression(expression) }
            }
        }
        return ProfileMapping(steps: steps, document: document, fields: fields, emailVerified: policy)
    }

    private mutating func step(_ value: JSONValue, at path: String) -> ProfileStep? {
        if value.stringValue != nil { return stepURL(value, at: path).map { ProfileStep(url: $0) } }
        guard let object = value.objectValue else {
            defect(path, "must be a URL or a step object")
            return nil
        }
        for key in object.keys.sorted() where !Self.stepKeys.contains(key) { defect(path + "/" + key, "unknown key") }
        guard let urlValue = object["url"] else {
            defect(path + "/url", "required")
            return nil
        }
        guard let url = stepURL(urlValue, at: path + "/url") else { return nil }
        var step = ProfileStep(url: url)
        if let method = object["method"] {
            if let text = method.stringValue?.uppercased(), ["GET", "POST"].contains(text) {
                step.method = text
            } else {
                defect(path + "/method", "must be GET or POST")
            }
        }
        step.query = strings(object["query"], at: path + "/query")
        step.headers = strings(object["headers"], at: path + "/headers")
        if let export = object["export"] {
            if let members = export.objectValue {
                for (name, spec) in members.sorted(by: { $0.key < $1.key }) {
                    if let expression = expression(spec, at: path + "/export/" + name) { step.export[name] = expression }
                }
            } else {
                defect(path + "/export", "must be an object")
            }
        }
        if let optional = object["optional"] {
            if let flag = optional.boolValue { step.optional = flag } else { defect(path + "/optional", "must be true or false") }
        }
        if let tokenInvalid = object["token_invalid"] {
            step.tokenInvalid = expression(tokenInvalid, at: path + "/token_invalid")
        }
        if let format = object["format"] {
            switch format.stringValue {
            case "json": step.signed = false
            case "jwt": step.signed = true
            default: defect(path + "/format", "must be json or jwt")
            }
        }
        if let body = object["body"] {
            if let text = body.stringValue, let encoding = Endpoint.BodyEncoding(rawValue: text) {
                step.body = encoding
                if encoding == .json && step.method != "POST" { defect(path + "/body", "json needs method POST") }
            } else {
                defect(path + "/body", "must be form or json")
            }
        }
        return step
    }

    private mutating func stepURL(_ value: JSONValue, at path: String) -> String? {
        guard let text = value.stringValue else {
            defect(path, "must be a string")
            return nil
        }
        if Template.flowValueChoosesHost(text), !learnsHost || LearnedOrigin(template: text) == nil {
            defect(path, "a flow value ({{…}}) cannot choose the host: it would choose who gets the token")
            return nil
        }
        if text.hasPrefix("https://") || text.hasPrefix("http://") || text.hasPrefix("{") { return text }
        if text.hasPrefix("/"), let base { return base + text }
        defect(path, "must be an absolute http(s) URL, or a path starting with / when the provider has a request url")
        return nil
    }

    private mutating func strings(_ value: JSONValue?, at path: String) -> [String: String] {
        guard let value else { return [:] }
        guard let object = value.objectValue else {
            defect(path, "must be an object of strings")
            return [:]
        }
        var result: [String: String] = [:]
        for (key, item) in object {
            if let text = item.stringValue { result[key] = text } else { defect(path + "/" + key, "must be a string") }
        }
        return result
    }

    mutating func expression(_ value: JSONValue, at path: String) -> ProfileExpression? {
        if let text = value.stringValue { return self.path(text, at: path).map(ProfileExpression.path) }
        guard let object = value.objectValue else {
            defect(path, "must be a path string or an expression object")
            return nil
        }
        let named = object.keys.filter { Self.operators[$0] != nil }
        guard named.count == 1, let name = named.first, let argument = object[name], let modifiers = Self.operators[name] else {
            defect(path, "needs exactly one of " + Self.operators.keys.sorted().joined(separator: ", "))
            return nil
        }
        for key in object.keys.sorted() where key != name && !modifiers.contains(key) {
            defect(path + "/" + key, "unknown key for \(name)")
        }
        let here = path + "/" + name
        switch name {
        case "path":
            guard let text = argument.stringValue else { return invalid(here, "must be a path string") }
            return self.path(text, at: here).map(ProfileExpression.path)
        case "value":
            return .constant(argument)
        case "first", "join":
            guard let items = argument.arrayValue, !items.isEmpty else { return invalid(here, "must be a non-empty list of expressions") }
            let parts = items.enumerated().compactMap { expression($0.element, at: here + "/\($0.offset)") }
            guard parts.count == items.count else { return nil }
            if name == "first" { return .first(parts) }
            var separator = ""
            if let value = object["separator"] {
                guard let text = value.stringValue else { return invalid(path + "/separator", "must be a string") }
                separator = text
            }
            return .join(parts, separator: separator)
        case "template":
            guard let text = argument.stringValue else { return invalid(here, "must be a string") }
            return template(text, at: here).map(ProfileExpression.template)
        case "map":
            guard let table = argument.objectValue else { return invalid(here, "must be an object of values") }
            guard let input = from(object, at: path) else { return nil }
            return .map(input, table: table, fallback: object["default"])
        case "date":
            let texts = argument.stringValue.map { [$0] } ?? argument.arrayValue?.compactMap(\.stringValue) ?? []
            let patterns = texts.compactMap(DatePattern.init)
            guard !patterns.isEmpty, patterns.count == (argument.arrayValue?.count ?? 1) else {
                return invalid(here, "must be a date pattern or a list of them (YYYY, MM, DD and separators)")
            }
            guard let input = from(object, at: path) else { return nil }
            return .date(input, patterns: patterns)
        case "string", "boolean":
            guard let input = expression(argument, at: here) else { return nil }
            return name == "string" ? .string(input) : .boolean(input)
        case "split":
            guard let separator = argument.stringValue, !separator.isEmpty else { return invalid(here, "must be a non-empty string") }
            guard let input = from(object, at: path) else { return nil }
            var index = 0
            if let value = object["index"] {
                guard case .number(let number) = value, number.rounded() == number else { return invalid(path + "/index", "must be an integer") }
                index = Int(number)
            }
            var rest = false
            if let value = object["rest"] {
                guard let flag = value.boolValue else { return invalid(path + "/rest", "must be true or false") }
                rest = flag
            }
            return .split(input, separator: separator, index: index, rest: rest)
        case "find":
            guard let input = expression(argument, at: here) else { return nil }
            guard let matching = object["where"]?.objectValue, !matching.isEmpty else {
                return invalid(path + "/where", "required: an object of member values to match")
            }
            var then: ProfilePath?
            if let value = object["then"] {
                guard let text = value.stringValue, let parsed = self.path(text, at: path + "/then") else { return nil }
                then = parsed
            }
            return .find(input, matching: matching, then: then)
        default:
            guard let members = argument.objectValue, !members.isEmpty else { return invalid(here, "must be an object of expressions") }
            var result: [String: ProfileExpression] = [:]
            for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                if let parsed = expression(member, at: here + "/" + key) { result[key] = parsed }
            }
            return result.count == members.count ? .object(result) : nil
        }
    }

    private mutating func from(_ object: JSONObject, at path: String) -> ProfileExpression? {
        guard let value = object["from"] else { return invalid(path + "/from", "required") }
        return expression(value, at: path + "/from")
    }

    private mutating func path(_ text: String, at path: String) -> ProfilePath? {
        guard let parsed = ProfilePath(text) else { return invalid(path, "'\(text)' is not a valid path (a.b, a[0], a[-1], a[\"key\"], $export)") }
        return parsed
    }

    private mutating func template(_ text: String, at path: String) -> [ProfileExpression.TemplatePiece]? {
        var pieces: [ProfileExpression.TemplatePiece] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            if open > rest.startIndex { pieces.append(.literal(String(rest[..<open]))) }
            guard let close = rest[open...].firstIndex(of: "}") else { return invalid(path, "unclosed {") }
            guard let parsed = self.path(String(rest[rest.index(after: open)..<close]), at: path) else { return nil }
            pieces.append(.path(parsed))
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty { pieces.append(.literal(String(rest))) }
        guard pieces.contains(where: { if case .path = $0 { true } else { false } }) else {
            return invalid(path, "a template needs at least one {path}")
        }
        return pieces
    }

    private mutating func invalid<T>(_ path: String, _ message: String) -> T? {
        defect(path, message)
        return nil
    }

    private mutating func defect(_ path: String, _ message: String) {
        defects.append(DefinitionDefect(path: path, message: message))
    }
}
