public import GatehouseCore

/// Runs a `ProfileMapping` over a fetched document. Pure: the fetching itself belongs to the
/// caller, which renders each step with `ProfileEvaluator.flowValue` and collects exports
/// with `exports(of:body:)`.
public enum ProfileEvaluator {
    /// The unified profile for `document`: every mapped field that is not empty, then
    /// `email_verified` by the provider's policy, then `raw` (the document untouched).
    public static func profile(_ mapping: ProfileMapping, document: JSONValue, exports: JSONObject = [:]) -> JSONObject {
        var profile: JSONObject = [:]
        for (name, expression) in mapping.fields {
            if let value = evaluate(expression, document: document, exports: exports), !isEmpty(value) {
                profile[name] = value
            }
        }
        if profile["email"] != nil {
            switch mapping.emailVerified {
            case .never: profile["email_verified"] = false
            case .always: profile["email_verified"] = true
            case .expression(let expression):
                profile["email_verified"] = .bool(evaluate(expression, document: document, exports: exports).map(isTrue) ?? false)
            }
        }
        profile["raw"] = document
        return profile
    }

    /// The exports a step declares, evaluated over its body; empty values are left out.
    public static func exports(of step: ProfileStep, body: JSONValue, into exports: inout JSONObject) {
        Self.exports(step.export, body: body, into: &exports)
    }

    /// `export` evaluated over `body`; empty values are left out.
    public static func exports(_ export: [String: ProfileExpression], body: JSONValue, into exports: inout JSONObject) {
        for (name, expression) in export {
            if let value = evaluate(expression, document: body, exports: exports), !isEmpty(value) { exports[name] = value }
        }
    }

    /// `?filter=a,b`: only the named fields, and `raw` always (OAuth.io adds it after filtering).
    /// Whether `body`, as one of `step`'s answers, says the token was refused.
    public static func refusesToken(_ step: ProfileStep, body: JSONValue) -> Bool {
        guard let predicate = step.tokenInvalid, let value = evaluate(predicate, document: body) else { return false }
        return isTrue(value)
    }

    public static func filtered(_ profile: JSONObject, keeping names: [String]) -> JSONObject {
        let wanted = Set(names)
        return profile.filter { wanted.contains($0.key) || $0.key == "raw" }
    }

    /// An export as a template flow value (`{{name}}`).
    public static func flowValue(_ value: JSONValue) -> String? {
        text(value)
    }

    /// JSON null is absence. Spelled out because in `$0 == .null ? nil : $0` the `nil` types as
    /// JSON null itself (JSONValue is ExpressibleByNilLiteral), which keeps the null.
    private static func absentIfNull(_ value: JSONValue) -> JSONValue? {
        if case .null = value { return Optional.none }
        return value
    }

    public static func evaluate(_ expression: ProfileExpression, document: JSONValue, exports: JSONObject = [:]) -> JSONValue? {
        func run(_ inner: ProfileExpression) -> JSONValue? {
            evaluate(inner, document: document, exports: exports)
        }
        switch expression {
        case .path(let path):
            return path.resolve(in: document, exports: exports).flatMap(Self.absentIfNull)
        case .constant(let value):
            return value
        case .first(let options):
            for option in options {
                if let value = run(option), !isEmpty(value) { return value }
            }
            return nil
        case .join(let parts, let separator):
            let texts = parts.compactMap { run($0).flatMap(text) }.filter { !$0.isEmpty }
            return texts.isEmpty ? nil : .string(texts.joined(separator: separator))
        case .template(let pieces):
            var output = ""
            for piece in pieces {
                switch piece {
                case .literal(let literal): output += literal
                case .path(let path):
                    guard let value = path.resolve(in: document, exports: exports).flatMap(text), !value.isEmpty else { return nil }
                    output += value
                }
            }
            return .string(output)
        case .map(let input, let table, let fallback):
            guard let key = run(input).flatMap(text) else { return nil }
            return table[key] ?? table[key.lowercased()] ?? fallback
        case .date(let input, let patterns):
            guard let value = run(input).flatMap(text) else { return nil }
            return patterns.lazy.compactMap { $0.parse(value) }.first
        case .string(let input):
            return run(input).flatMap(text).map(JSONValue.string)
        case .boolean(let input):
            return .bool(run(input).map(isTrue) ?? false)
        case .split(let input, let separator, let index, let rest):
            guard let value = run(input).flatMap(text), !separator.isEmpty else { return nil }
            let parts = value.split(separator: separator, omittingEmptySubsequences: true).map(String.init)
            let position = index < 0 ? parts.count + index : index
            guard position >= 0, position < parts.count else { return nil }
            return .string(rest ? parts[position...].joined(separator: separator) : parts[position])
        case .find(let input, let matching, let then):
            guard let items = run(input)?.arrayValue else { return nil }
            guard let found = items.first(where: { item in matching.allSatisfy { item[$0.key] == $0.value } }) else { return nil }
            guard let then else { return found }
            return then.resolve(in: found, exports: exports).flatMap(Self.absentIfNull)
        case .object(let members):
            var object: JSONObject = [:]
            for (name, member) in members {
                if let value = run(member), !isEmpty(value) { object[name] = value }
            }
            return object.isEmpty ? nil : .object(object)
        }
    }

    /// Null, "", [] and {} count as absent.
    static func isEmpty(_ value: JSONValue) -> Bool {
        switch value {
        case .null: return true
        case .string(let text): return text.isEmpty
        case .array(let items): return items.isEmpty
        case .object(let members): return members.isEmpty
        default: return false
        }
    }

    static func isTrue(_ value: JSONValue) -> Bool {
        switch value {
        case .bool(let flag): return flag
        case .string(let text): return text.lowercased() == "true"
        case .number(let number): return number == 1
        default: return false
        }
    }

    /// Strings as they are, integral numbers without a fraction, booleans as true/false.
    static func text(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): return text
        case .number(let number):
            if number.rounded() == number, abs(number) < 9.0e15 { return String(Int64(number)) }
            return String(number)
        case .bool(let flag): return flag ? "true" : "false"
        default: return nil
        }
    }
}
