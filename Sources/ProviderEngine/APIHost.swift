/// A host a provider may be reached on when the login, not the definition, names it:
/// Salesforce's `instance_url` and Wrike's `host` (token answers), Kommo's `referer` (the
/// callback). Such a URL takes its origin from a flow value that a caller, a callback or the
/// backend sends, so the value is used only if one of the endpoint's `hosts` admits it:
/// otherwise the user's token, the code or the app's secret could be sent anywhere.
///
/// Written `https://api.example.com`, or `https://*.example.com` for any name under
/// `example.com` (not `example.com` itself), with an optional port.
public struct APIHost: Sendable, Hashable, CustomStringConvertible {
    public let scheme: String
    /// Lowercased; without the `*.` of a wildcard.
    public let domain: String
    public let anySubdomain: Bool
    public let port: Int?

    public init?(_ text: String) {
        guard let origin = Origin(text) else { return nil }
        var domain = origin.host
        anySubdomain = domain.hasPrefix("*.")
        if anySubdomain { domain.removeFirst(2) }
        // A wildcard needs a registrable name under it: `*.com` would admit the whole TLD.
        guard !domain.isEmpty, !domain.contains("*"), !anySubdomain || domain.contains(".") else { return nil }
        scheme = origin.scheme
        self.domain = domain
        port = origin.port
    }

    public var description: String {
        "\(scheme)://\(anySubdomain ? "*." : "")\(domain)" + (port.map { ":\($0)" } ?? "")
    }

    func admits(_ origin: Origin) -> Bool {
        guard origin.scheme == scheme, origin.port == port else { return false }
        return anySubdomain ? origin.host.hasSuffix("." + domain) : origin.host == domain
    }
}

/// `scheme://host[:port]`, optionally with one trailing `/`, and nothing else: no
/// credentials, path, query or fragment (`LearnedOrigin` splits a path off first). Host names
/// are letters, digits, `-` and `.` (and `*` for `APIHost`'s wildcard, refused in a learned
/// value by `LearnedOrigin`).
struct Origin: Sendable, Hashable {
    let scheme: String
    let host: String
    let port: Int?

    init?(_ text: String) {
        var text = Substring(text)
        if text.hasSuffix("/") { text = text.dropLast() }
        guard let separator = text.firstRange(of: "://") else { return nil }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "https" || scheme == "http" else { return nil }
        var authority = text[separator.upperBound...]
        var port: Int?
        if let colon = authority.lastIndex(of: ":") {
            let digits = authority[authority.index(after: colon)...]
            let isNumber = (1...5).contains(digits.count) && digits.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            guard isNumber, let value = Int(digits), (1...65535).contains(value) else { return nil }
            // The scheme's own port is no port: `https://x:443` is `https://x`.
            port = value == (scheme == "https" ? 443 : 80) ? nil : value
            authority = authority[..<colon]
        }
        let host = authority.lowercased()
        guard !host.isEmpty, host.utf8.allSatisfy(Self.isHostByte), !host.hasPrefix("."), !host.hasSuffix("."), !host.contains("..") else {
            return nil
        }
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "*"):
            true
        default: false
        }
    }

    var text: String { "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "") }
}

/// A URL template whose origin the login names: one flow value as the whole origin
/// (`{{instance_url}}/services/data`), or a host after a scheme built of flow values and fixed
/// text: `https://{{host}}/api/v4`, `https://{{subdomain}}.{{apicp}}/oauth/token` (ShareFile),
/// `https://{{subdomain}}.sf-api.com/sf/v3`.
struct LearnedOrigin: Sendable, Hashable {
    /// The flow values that name the origin, in the order they appear.
    let names: [String]
    /// For a template that names a host after a scheme, that scheme.
    let scheme: String?
    /// The host after the scheme: flow values and fixed text (`.`, `sf-api.com`, `:8443`).
    let host: [Piece]
    /// The template after the origin (`/services/data`), empty or starting with `/`.
    let rest: String

    enum Piece: Sendable, Hashable {
        case flow(String)
        case text(String)
    }

    /// Nil when the template's origin is not named by flow values as above.
    init?(template: String) {
        var text = Substring(template)
        var scheme: String?
        for candidate in ["https", "http"] where text.hasPrefix(candidate + "://") {
            scheme = candidate
            text = text.dropFirst(candidate.count + 3)
        }
        guard scheme != nil || text.hasPrefix("{{") else { return nil }
        let end = scheme == nil ? (text.firstRange(of: "}}")?.upperBound ?? text.startIndex) : (text.firstIndex(of: "/") ?? text.endIndex)
        var host: [Piece] = []
        var remaining = text[..<end]
        while !remaining.isEmpty {
            if remaining.hasPrefix("{{") {
                guard let close = remaining.firstRange(of: "}}") else { return nil }
                // Spaces inside the braces are ignored, as everywhere in a template.
                let name = String(remaining[remaining.index(remaining.startIndex, offsetBy: 2)..<close.lowerBound].filter { $0 != " " })
                guard !name.isEmpty, name.utf8.allSatisfy(Template.isNameByte) else { return nil }
                host.append(.flow(name))
                remaining = remaining[close.upperBound...]
            } else {
                let literal = remaining.prefix { $0 != "{" }
                guard literal.utf8.allSatisfy(Self.isHostTextByte) else { return nil }
                host.append(.text(String(literal)))
                remaining = remaining[literal.endIndex...]
            }
        }
        let rest = text[end...]
        names = host.compactMap { if case .flow(let name) = $0 { name } else { nil } }
        guard !names.isEmpty, rest.isEmpty || rest.hasPrefix("/"), scheme != nil || host.count == 1 else { return nil }
        self.scheme = scheme
        self.host = host
        self.rest = String(rest)
    }

    /// The origin `values` name (`https://na1.salesforce.com`), if one of `hosts` admits it,
    /// with the path a whole-origin value may carry after it (Basecamp's
    /// `https://3.basecampapi.com/20418377`): the caller may reach any path on an admitted host
    /// through `/request` anyway, so only the host is guarded; the path is plain segments,
    /// without dot segments or escapes.
    func origin(from values: [String: String], admittedBy hosts: [APIHost]) -> String? {
        guard values.values.allSatisfy({ !$0.contains("*") }) else { return nil }
        let candidate: Origin?
        var path = ""
        if let scheme, host.count == 1, case .flow(let name) = host[0], let value = values[name] {
            guard !value.contains("/") else { return nil }
            candidate = Origin(scheme + "://" + value)
        } else if let scheme {
            // Several pieces: each value is labels only, so together they can only spell a host.
            var text = scheme + "://"
            for piece in host {
                switch piece {
                case .text(let literal): text += literal
                case .flow(let name):
                    guard let value = values[name], !value.isEmpty, value.utf8.allSatisfy(Self.isLabelByte) else { return nil }
                    text += value
                }
            }
            candidate = Origin(text)
        } else {
            guard let name = names.first, var text = values[name].map({ Substring($0) }) else { return nil }
            if let separator = text.firstRange(of: "://"), let slash = text[separator.upperBound...].firstIndex(of: "/") {
                path = String(text[slash...])
                text = text[..<slash]
                while path.hasSuffix("/") { path.removeLast() }
                guard Self.isPlainPath(path) else { return nil }
            }
            candidate = Origin(String(text))
        }
        guard let candidate, hosts.contains(where: { $0.admits(candidate) }) else { return nil }
        return candidate.text + path
    }

    /// Letters, digits, `-` and `.`: what a flow value may bring to a host built of pieces.
    private static func isLabelByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."):
            true
        default: false
        }
    }

    /// A host's fixed text may also hold the port (`:8443`).
    private static func isHostTextByte(_ byte: UInt8) -> Bool {
        isLabelByte(byte) || byte == UInt8(ascii: ":")
    }

    /// `/a/b-c/1.2`: segments of letters, digits and `-._~`, none of them `.` or `..`.
    private static func isPlainPath(_ path: String) -> Bool {
        path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().allSatisfy { segment in
            !segment.isEmpty && segment != "." && segment != ".."
                && segment.utf8.allSatisfy { byte in
                    switch byte {
                    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                        UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                        true
                    default: false
                    }
                }
        }
    }
}

extension Endpoint {
    /// The flow values that name this endpoint's host (`instance_url`; `subdomain` and `apicp`),
    /// when it lists `hosts`.
    public var learnedHostFields: [String] {
        hosts.isEmpty ? [] : LearnedOrigin(template: url)?.names ?? []
    }
}

/// A rendered API URL, or why the login-named host in it cannot be used.
public enum APIURL: Sendable, Hashable {
    case url(String)
    /// The caller did not send the flow value that names the host.
    case missing(field: String)
    /// The values name a host the definition does not list.
    case notAdmitted(fields: [String])
}

extension Template {
    /// Renders an API URL (a `request` base or a profile step). When its origin is a flow
    /// value and the provider lists `hosts`, the value must be one of them; the rest of the
    /// URL renders as `renderURL` does.
    public static func renderAPIURL(_ template: String, _ context: TemplateContext, hosts: [APIHost]) -> APIURL {
        guard !hosts.isEmpty, let learned = LearnedOrigin(template: template) else { return .url(renderURL(template, context)) }
        var values: [String: String] = [:]
        for name in learned.names {
            guard let value = context.flow[name], !value.isEmpty else { return .missing(field: name) }
            values[name] = value
        }
        guard let origin = learned.origin(from: values, admittedBy: hosts) else { return .notAdmitted(fields: learned.names) }
        return .url(origin + renderURL(learned.rest, context))
    }
}
