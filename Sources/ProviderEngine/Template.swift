public import GatehouseCore

/// Values a template can refer to: `{name}` reads the app's keyset (only parameters the
/// provider declares), `{{name}}` reads the flow (state, callback, code, token, ...).
public struct TemplateContext: Sendable {
    public var keyset: JSONObject
    public var parameters: [String: Parameter]
    public var flow: [String: String]

    public init(keyset: JSONObject = [:], parameters: [String: Parameter] = [:], flow: [String: String] = [:]) {
        self.keyset = keyset
        self.parameters = parameters
        self.flow = flow
    }

    /// A keyset value as it goes into a URL: lists joined with the parameter's separator. A
    /// missing value takes the parameter's default, which may name other keyset values
    /// (`https://{domain}`); those are read with their own defaults as written, so defaults
    /// cannot chase each other.
    public func keysetValue(_ name: String) -> String {
        guard let parameter = parameters[name] else { return "" }
        guard let value = keyset[name] else {
            guard let fallback = parameter.defaultValue, fallback.utf8.contains(UInt8(ascii: "{")) else { return parameter.defaultValue ?? "" }
            var plain = self
            plain.parameters = parameters.mapValues { parameter in
                var parameter = parameter
                if parameter.defaultValue?.utf8.contains(UInt8(ascii: "{")) == true { parameter.defaultValue = nil }
                return parameter
            }
            return Template.render(fallback, plain)
        }
        switch value {
        case .string(let text): return text
        case .array(let items): return items.compactMap(\.stringValue).joined(separator: parameter.separator)
        default: return ""
        }
    }
}

/// OAuth.io's template language: `{x}` keyset values, `{{x}}` flow values, and
/// `!BASE64…!BASE64` for base64 of the rendered text between the markers (Basic auth).
///
/// Rendering runs several times per login, so it scans UTF-8 bytes: the markup is ASCII,
/// and walking `Character`s (grapheme breaking) cost more than the rest of a render.
public enum Template {
    private static let base64Marker = Array("!BASE64".utf8)
    private static let openBrace = UInt8(ascii: "{")
    /// The first byte of `base64Marker`.
    private static let markerStart = UInt8(ascii: "!")
    private static let closeBrace = UInt8(ascii: "}")

    /// Renders `template`. Unknown names render as empty strings.
    public static func render(_ template: String, _ context: TemplateContext) -> String {
        render(template, context, encoding: .none)
    }

    /// Each of `templates` rendered, in name order, without the ones that render empty (OAuth.io
    /// leaves empty query and header values out).
    public static func renderValues(_ templates: [String: String]?, _ context: TemplateContext) -> [(name: String, value: String)] {
        guard let templates, !templates.isEmpty else { return [] }
        // Rendered into one array and sorted there: sorting the templates first made a second.
        var rendered: [(name: String, value: String)] = []
        rendered.reserveCapacity(templates.count)
        for (name, template) in templates {
            let value = render(template, context)
            if !value.isEmpty { rendered.append((name, value)) }
        }
        rendered.sort { $0.name < $1.name }
        return rendered
    }

    /// Renders an endpoint's URL. Flow values (`{{code}}`, `{{token}}`, a profile step's export)
    /// come from callers, callbacks and provider answers, so they are percent-encoded: a code
    /// of `x&client_id=…` or a token of `../admin` must stay one value, not add a parameter or
    /// a path. Keyset values are the operator's (`https://{domain}/`) and go in as they are,
    /// except in the query, where a value is a value (a secret may hold `&`).
    public static func renderURL(_ template: String, _ context: TemplateContext) -> String {
        guard let question = template.utf8.firstIndex(of: UInt8(ascii: "?")) else { return render(template, context, encoding: .flow) }
        return render(String(template[..<question]), context, encoding: .flow)
            + render(String(template[question...]), context, encoding: .all)
    }

    /// Which substituted values are percent-encoded.
    private enum Encoding { case none, flow, all }

    private static func render(_ template: String, _ context: TemplateContext, encoding: Encoding) -> String {
        // Most query and header values are one reference and nothing else (`{client_id}`,
        // `{{code}}`): their value, without a scan or an output buffer.
        if let (name, isFlow) = soleReference(template) { return value(of: name, isFlow: isFlow, context, encoding) }
        // Many templates are plain text (`authorization_code`, an endpoint's URL): without a
        // brace or a `!` there is no markup, and no copy of the text is needed to find that out.
        guard template.withUTF8InPlace({ $0.contains { $0 == openBrace || $0 == markerStart } }) else { return template }
        let bytes = Array(template.utf8)
        guard bytes.contains(openBrace) || find(base64Marker, in: bytes, from: 0) != nil else { return template }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 64)
        var position = 0
        while let start = find(base64Marker, in: bytes, from: position) {
            substitute(bytes[position..<start], context, encoding, into: &output)
            let inner = start + base64Marker.count
            guard let end = find(base64Marker, in: bytes, from: inner) else {
                position = inner
                break
            }
            var encoded: [UInt8] = []
            substitute(bytes[inner..<end], context, encoding, into: &encoded)
            output.append(contentsOf: Base64.encode(encoded).utf8)
            position = end + base64Marker.count
        }
        substitute(bytes[position...], context, encoding, into: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// True when a flow value sits in a URL template's scheme or host (`https://{{host}}/x`,
    /// `{{href}}`). Those values come from callers, callbacks and provider answers; where they
    /// choose the host, they choose who receives the client secret or the user's token.
    public static func flowValueChoosesHost(_ url: String) -> Bool {
        var rest = Substring(url)
        if let scheme = rest.firstRange(of: "://") { rest = rest[scheme.upperBound...] }
        let authority = rest.prefix { $0 != "/" }
        return !references(in: String(authority)).flow.isEmpty
    }

    /// The names a template refers to: `keyset` for `{x}`, `flow` for `{{x}}`.
    public static func references(in template: String) -> (keyset: Set<String>, flow: Set<String>) {
        var keyset: Set<String> = []
        var flow: Set<String> = []
        var ignored: [UInt8] = []
        scan(Array(template.utf8)[...], into: &ignored) { name, isFlow in
            if isFlow { flow.insert(name) } else { keyset.insert(name) }
            return ""
        }
        return (keyset, flow)
    }

    private static func substitute(_ text: ArraySlice<UInt8>, _ context: TemplateContext, _ encoding: Encoding, into output: inout [UInt8]) {
        scan(text, into: &output) { name, isFlow in value(of: name, isFlow: isFlow, context, encoding) }
    }

    private static func value(of name: String, isFlow: Bool, _ context: TemplateContext, _ encoding: Encoding) -> String {
        let value = isFlow ? (context.flow[name] ?? "") : context.keysetValue(name)
        switch encoding {
        case .none: return value
        case .flow: return isFlow ? PercentEncoding.encode(value) : value
        case .all: return PercentEncoding.encode(value)
        }
    }

    /// The name when `template` is exactly one `{name}` or `{{name}}`, read as `scan` reads it.
    /// Works on the contiguous bytes: every query and header value of every outbound request
    /// comes through here, and slicing the UTF8View cost more than the lookup that follows.
    private static func soleReference(_ template: String) -> (name: String, isFlow: Bool)? {
        template.withUTF8InPlace { utf8 -> (name: String, isFlow: Bool)? in
            let count = utf8.count
            guard count >= 3, utf8[0] == openBrace, utf8[count - 1] == closeBrace else { return nil }
            let isFlow = utf8[1] == openBrace
            guard !isFlow || (count >= 5 && utf8[count - 2] == closeBrace) else { return nil }
            let inner = isFlow ? 2..<(count - 2) : 1..<(count - 1)
            var spaces = 0
            for index in inner {
                let byte = utf8[index]
                if byte == UInt8(ascii: " ") {
                    spaces += 1
                } else if !isNameByte(byte) {
                    return nil
                }
            }
            guard spaces < inner.count else { return nil }
            if spaces == 0 { return (String(decoding: UnsafeBufferPointer(rebasing: utf8[inner]), as: UTF8.self), isFlow) }
            // Spaces inside the braces are ignored (`{{ state }}`), wherever they are.
            let name = utf8[inner].filter { $0 != UInt8(ascii: " ") }
            return (String(decoding: name, as: UTF8.self), isFlow)
        }
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        var index = start
        while index <= bytes.count - needle.count {
            if bytes[index] == needle[0], bytes[index..<index + needle.count].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    /// Letters, digits, `_`, `-`, `.`; bytes of non-ASCII characters count as letters.
    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."), 0x80...:
            true
        default: false
        }
    }

    /// Walks `text`, appending it to `output` with each `{name}` / `{{name}}` replaced by
    /// `replace(name, isFlow)`. Spaces inside the braces are ignored (`{{ state }}` works).
    private static func scan(_ text: ArraySlice<UInt8>, into output: inout [UInt8], _ replace: (String, Bool) -> String) {
        var index = text.startIndex
        while index < text.endIndex {
            guard let open = text[index...].firstIndex(of: openBrace) else {
                output.append(contentsOf: text[index...])
                return
            }
            output.append(contentsOf: text[index..<open])
            let isFlow = open + 1 < text.endIndex && text[open + 1] == openBrace
            let nameStart = isFlow ? open + 2 : open + 1
            guard nameStart <= text.endIndex, let close = text[nameStart...].firstIndex(of: closeBrace) else {
                output.append(contentsOf: text[open...])
                return
            }
            var end = close + 1
            if isFlow {
                guard end < text.endIndex, text[end] == closeBrace else {
                    output.append(contentsOf: text[open..<end])
                    index = end
                    continue
                }
                end += 1
            }
            let name = text[nameStart..<close].filter { $0 != UInt8(ascii: " ") }
            guard !name.isEmpty, name.allSatisfy(isNameByte) else {
                output.append(contentsOf: text[open..<end])
                index = end
                continue
            }
            output.append(contentsOf: replace(String(decoding: name, as: UTF8.self), isFlow).utf8)
            index = end
        }
    }
}
