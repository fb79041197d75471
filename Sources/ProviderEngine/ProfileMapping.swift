public import GatehouseCore

/// The `profile` block of a provider definition: how `GET /auth/:provider/me` fetches the
/// user's profile and maps it onto the unified fields (interface.md §4). It replaces
/// oauthd's executable me.js with data; docs/providers.md documents the language.
public struct ProfileMapping: Sendable, Hashable {
    /// The requests made in order. Empty for providers whose profile comes from somewhere
    /// else (an id_token's claims, a native sign-in record).
    public var steps: [ProfileStep]
    /// The index of the step whose body is mapped and returned as `raw` (default: the last).
    public var document: Int
    /// Unified field name → how to compute it. Fields that come out empty are left out.
    public var fields: [String: ProfileExpression]
    /// When `email_verified` is true.
    public var emailVerified: EmailVerifiedPolicy

    public init(steps: [ProfileStep] = [], document: Int? = nil, fields: [String: ProfileExpression], emailVerified: EmailVerifiedPolicy = .never) {
        self.steps = steps
        self.document = document ?? max(steps.count - 1, 0)
        self.fields = fields
        self.emailVerified = emailVerified
    }

    /// The unified profile fields of interface.md §4; mappings may add provider-specific ones.
    public static let unifiedFields: [String] = [
        "id", "name", "firstname", "lastname", "alias", "email", "email_verified", "avatar", "gender", "locale", "location",
        "phone", "birthdate", "url", "company", "occupation",
    ]
}

/// One request of a profile fetch. URL, query and headers are templates (`{x}` keyset,
/// `{{x}}` flow: `token`, `today`, the `oauthio` header's fields and earlier exports).
public struct ProfileStep: Sendable, Hashable {
    public var url: String
    public var method: String
    public var query: [String: String]
    public var headers: [String: String]
    /// Values taken from this step's body for later steps (`{{name}}`) and fields (`$name`).
    public var export: [String: ProfileExpression]
    /// A failing optional step leaves its exports absent instead of failing `me`.
    public var optional: Bool
    /// True on a body (of any status) that says the token itself was refused, so `me`
    /// answers 401 rather than 502: Facebook's error code 190 on a 400, Slack's `ok: false`
    /// on a 200.
    public var tokenInvalid: ProfileExpression?
    /// `json`: a POST step sends `query` as a JSON object of strings in its body (a GraphQL
    /// `{"query": "{ me { id } }"}`, say) instead of in the URL.
    public var body: Endpoint.BodyEncoding
    /// The answer is a JWT signed by the provider (OpenID Connect Core §5.3.2: a signed
    /// UserInfo response, FranceConnect's only form): its claims are the body once the
    /// signature, issuer and audience check out against the `openid` block.
    public var signed = false

    public init(
        url: String, method: String = "GET", query: [String: String] = [:], headers: [String: String] = [:],
        export: [String: ProfileExpression] = [:], optional: Bool = false, tokenInvalid: ProfileExpression? = nil,
        body: Endpoint.BodyEncoding = .form
    ) {
        self.url = url
        self.method = method
        self.query = query
        self.headers = headers
        self.export = export
        self.optional = optional
        self.tokenInvalid = tokenInvalid
        self.body = body
    }
}

/// Whether the provider vouches for the address it returns. `email_verified` is true only
/// where it does; it is false when an email is present without that assertion.
public enum EmailVerifiedPolicy: Sendable, Hashable {
    /// The provider says nothing about verification.
    case never
    /// The provider documents that every address it returns is verified.
    case always
    /// A field of the body says so (`true`, `"true"` or 1).
    case expression(ProfileExpression)
}

/// A value computed from a profile document. Every form yields "absent" rather than an
/// error when its input is missing or has the wrong shape: a profile with fewer fields is
/// still a profile.
public indirect enum ProfileExpression: Sendable, Hashable {
    /// `"a.b[0].c"`: a value in the document (or `$name` for an export).
    case path(ProfilePath)
    /// `{"value": x}`: a constant.
    case constant(JSONValue)
    /// `{"first": [e…]}`: the first non-empty value.
    case first([ProfileExpression])
    /// `{"join": [e…], "separator": " "}`: the non-empty values as strings, joined.
    case join([ProfileExpression], separator: String)
    /// `{"template": "https://x.example/{login}"}`: text with paths in braces; absent if any is.
    case template([TemplatePiece])
    /// `{"map": {"male": 0}, "from": e, "default": x}`: an enumeration.
    case map(ProfileExpression, table: JSONObject, fallback: JSONValue?)
    /// `{"date": ["MM/DD/YYYY", "YYYY-MM-DD"], "from": e}`: `{day, month, year}` with the parts present.
    case date(ProfileExpression, patterns: [DatePattern])
    /// `{"string": e}`: numbers and booleans as text.
    case string(ProfileExpression)
    /// `{"boolean": e}`: true for `true`, `"true"` and 1, false otherwise.
    case boolean(ProfileExpression)
    /// `{"split": " ", "from": e, "index": 0, "rest": false}`: one part of a string (negative
    /// indexes count from the end; `rest` joins the part and everything after it).
    case split(ProfileExpression, separator: String, index: Int, rest: Bool)
    /// `{"find": e, "where": {"primary": true}, "then": "email"}`: the first array element
    /// whose members equal `where`, then an optional path inside it.
    case find(ProfileExpression, matching: JSONObject, then: ProfilePath?)
    /// `{"object": {"business": e}}`: an object of the non-empty values.
    case object([String: ProfileExpression])

    public enum TemplatePiece: Sendable, Hashable {
        case literal(String)
        case path(ProfilePath)
    }
}

/// A path into a JSON document: `a.b`, `a[0]`, `a[-1]` (last), `a["odd~key"]`, and `$name`
/// for an export of an earlier fetch step. The empty path is the document itself.
public struct ProfilePath: Sendable, Hashable, CustomStringConvertible {
    public enum Step: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    /// Set for `$name`: the path starts at that export instead of the document.
    public var export: String?
    public var steps: [Step]
    public let description: String

    /// Parses the path syntax; nil when it is malformed.
    public init?(_ text: String) {
        description = text
        var steps: [Step] = []
        let characters = Array(text)
        var index = 0
        if characters.first == "$" {
            let end = characters.firstIndex { $0 == "." || $0 == "[" } ?? characters.count
            let name = String(characters[1..<end])
            guard !name.isEmpty else { return nil }
            export = name
            index = end
            if index < characters.count, characters[index] == "." { index += 1 }
        }
        var key = ""
        func flushKey() -> Bool {
            guard !key.isEmpty else { return false }
            steps.append(.key(key))
            key = ""
            return true
        }
        while index < characters.count {
            let character = characters[index]
            switch character {
            case ".":
                guard flushKey() || (steps.last != nil && index > 0 && characters[index - 1] == "]") else { return nil }
                index += 1
                guard index < characters.count, characters[index] != "." else { return nil }
            case "[":
                _ = flushKey()
                guard let close = characters[index...].firstIndex(of: "]") else { return nil }
                let inside = String(characters[(index + 1)..<close])
                if inside.count >= 2, (inside.hasPrefix("\"") && inside.hasSuffix("\"")) || (inside.hasPrefix("'") && inside.hasSuffix("'")) {
                    steps.append(.key(String(inside.dropFirst().dropLast())))
                } else if let number = Int(inside) {
                    steps.append(.index(number))
                } else {
                    return nil
                }
                index = close + 1
                if index < characters.count, characters[index] != ".", characters[index] != "[" { return nil }
            case "]", "{", "}":
                return nil
            default:
                key.append(character)
                index += 1
            }
        }
        _ = flushKey()
        self.steps = steps
    }

    /// The value at this path, or nil when any step is missing or of the wrong kind.
    public func resolve(in document: JSONValue, exports: JSONObject = [:]) -> JSONValue? {
        var current: JSONValue
        if let export {
            guard let value = exports[export] else { return nil }
            current = value
        } else {
            current = document
        }
        for step in steps {
            switch step {
            case .key(let key):
                guard let next = current.objectValue?[key] else { return nil }
                current = next
            case .index(let index):
                guard let items = current.arrayValue else { return nil }
                let position = index < 0 ? items.count + index : index
                guard position >= 0, position < items.count else { return nil }
                current = items[position]
            }
        }
        return current
    }
}

/// A date layout such as `MM/DD/YYYY`: `YYYY` four digits, `MM`/`DD` one or two digits,
/// anything else literal.
public struct DatePattern: Sendable, Hashable, CustomStringConvertible {
    enum Token: Sendable, Hashable {
        case year, month, day
        case literal(Character)
    }

    let tokens: [Token]
    public let description: String

    public init?(_ text: String) {
        description = text
        var tokens: [Token] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            if rest.hasPrefix("YYYY") {
                tokens.append(.year)
                rest = rest.dropFirst(4)
            } else if rest.hasPrefix("MM") {
                tokens.append(.month)
                rest = rest.dropFirst(2)
            } else if rest.hasPrefix("DD") {
                tokens.append(.day)
                rest = rest.dropFirst(2)
            } else if let character = rest.first, !character.isLetter {
                tokens.append(.literal(character))
                rest = rest.dropFirst()
            } else {
                return nil
            }
        }
        guard tokens.contains(where: { $0 == .year || $0 == .month || $0 == .day }) else { return nil }
        self.tokens = tokens
    }

    /// `{day, month, year}` (numbers, only the parts the pattern has) if `text` fits exactly.
    func parse(_ text: String) -> JSONValue? {
        var rest = Substring(text)
        var result: JSONObject = [:]
        for token in tokens {
            switch token {
            case .literal(let character):
                guard rest.first == character else { return nil }
                rest = rest.dropFirst()
            case .year, .month, .day:
                let maximum = token == .year ? 4 : 2
                let digits = rest.prefix { $0.isASCII && $0.isNumber }.prefix(maximum)
                guard token == .year ? digits.count == 4 : !digits.isEmpty, let value = Int(digits) else { return nil }
                rest = rest.dropFirst(digits.count)
                switch token {
                case .year: result["year"] = .number(Double(value))
                case .month:
                    guard (1...12).contains(value) else { return nil }
                    result["month"] = .number(Double(value))
                default:
                    guard (1...31).contains(value) else { return nil }
                    result["day"] = .number(Double(value))
                }
            }
        }
        // Not a `? … : nil` ternary, whose `nil` could type-check as JSON null.
        guard rest.isEmpty else { return nil }
        return .object(result)
    }
}
