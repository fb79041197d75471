public import GatehouseCore

/// Values a template can refer to: `{name}` reads the app's keyset (only parameters the
/// provider declares), `{{name}}` reads the flow (state, callback, code, token, ...).
public struct TemplateContext: Sendable {
    public var keyset: [String: JSONValue]
    public var parameters: [String: Parameter]
    public var flow: [String: String]

    public init(keyset: [String: JSONValue] = [:], parameters: [String: Parameter] = [:], flow: [String: String] = [:]) {
        self.keyset = keyset
        self.parameters = parameters
        self.flow = flow
    }

    /// A keyset value as it goes into a URL: lists joined with the parameter's separator.
    public func keysetValue(_ name: String) -> String {
        guard let parameter = parameters[name] else { return "" }
        guard let value = keyset[name] else { return parameter.defaultValue ?? "" }
        switch value {
        case .string(let text): return text
        case .array(let items): return items.compactMap(\.stringValue).joined(separator: parameter.separator)
        default: return ""
        }
    }
}

/// OAuth.io's template language: `{x}` keyset values, `{{x}}` flow values, and
/// `!BASE64…!BASE64` for base64 of the rendered text between the markers (Basic auth).
public enum Template {
    private static let base64Marker = "!BASE64"

    /// Renders `template`. Unknown names render as empty strings.
    public static func render(_ template: String, _ context: TemplateContext) -> String {
        // Byte scans first: most values (tokens, URLs) hold neither marker, and this runs per API call.
        guard template.utf8.contains(UInt8(ascii: "{")) || (template.utf8.contains(UInt8(ascii: "!")) && template.contains(base64Marker))
        else { return template }
        var output = ""
        var rest = Substring(template)
        while let start = rest.firstRange(of: base64Marker) {
            output += substitute(rest[..<start.lowerBound], context)
            let after = rest[start.upperBound...]
            guard let end = after.firstRange(of: base64Marker) else {
                rest = after
                break
            }
            output += Base64.encode(Array(substitute(after[..<end.lowerBound], context).utf8))
            rest = after[end.upperBound...]
        }
        return output + substitute(rest, context)
    }

    /// The names a template refers to: `keyset` for `{x}`, `flow` for `{{x}}`.
    public static func references(in template: String) -> (keyset: Set<String>, flow: Set<String>) {
        var keyset: Set<String> = []
        var flow: Set<String> = []
        scan(Substring(template)) { name, isFlow in
            if isFlow { flow.insert(name) } else { keyset.insert(name) }
            return ""
        }
        return (keyset, flow)
    }

    private static func substitute(_ text: Substring, _ context: TemplateContext) -> String {
        scan(text) { name, isFlow in
            isFlow ? (context.flow[name] ?? "") : context.keysetValue(name)
        }
    }

    /// Walks `text`, replacing each `{name}` / `{{name}}` with `replace(name, isFlow)`.
    /// Spaces inside the braces are ignored (`{{ state }}` works).
    @discardableResult
    private static func scan(_ text: Substring, _ replace: (String, Bool) -> String) -> String {
        var output = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            guard character == "{" else {
                output.append(character)
                index = text.index(after: index)
                continue
            }
            let afterOpen = text.index(after: index)
            let isFlow = afterOpen < text.endIndex && text[afterOpen] == "{"
            let nameStart = isFlow ? text.index(after: afterOpen) : afterOpen
            guard let close = text[nameStart...].firstIndex(of: "}") else {
                output += text[index...]
                break
            }
            let name = text[nameStart..<close].filter { $0 != " " }
            var end = text.index(after: close)
            if isFlow {
                guard end < text.endIndex, text[end] == "}" else {
                    output += text[index..<end]
                    index = end
                    continue
                }
                end = text.index(after: end)
            }
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." }) else {
                output += text[index..<end]
                index = end
                continue
            }
            output += replace(String(name), isFlow)
            index = end
        }
        return output
    }
}
