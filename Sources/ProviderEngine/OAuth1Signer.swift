public import GatehouseCore
internal import GatehouseCrypto

/// OAuth 1.0a request signing with HMAC-SHA1 (RFC 5849 §3.4).
public struct OAuth1Signer: Sendable {
    public var consumerKey: String
    public var consumerSecret: String
    public var token: String?
    public var tokenSecret: String

    public init(consumerKey: String, consumerSecret: String, token: String? = nil, tokenSecret: String = "") {
        self.consumerKey = consumerKey
        self.consumerSecret = consumerSecret
        self.token = token
        self.tokenSecret = tokenSecret
    }

    /// The `Authorization: OAuth …` value for a request. `parameters` are the query and
    /// form-body fields the request also sends; `protocolExtras` are oauth_* values such as
    /// `oauth_callback` or `oauth_verifier`.
    public func authorization(
        method: String, url: String, parameters: [FormField], protocolExtras: [String: String] = [:], nonce: String, timestamp: Int64
    ) -> String {
        var oauth: [String: String] = [
            "oauth_consumer_key": consumerKey, "oauth_nonce": nonce, "oauth_signature_method": "HMAC-SHA1",
            "oauth_timestamp": String(timestamp), "oauth_version": "1.0",
        ]
        if let token { oauth["oauth_token"] = token }
        oauth.merge(protocolExtras) { _, extra in extra }
        oauth["oauth_signature"] = signature(method: method, url: url, parameters: parameters, oauth: oauth)
        let fields = oauth.sorted { $0.key < $1.key }.map { "\(PercentEncoding.encode($0.key))=\"\(PercentEncoding.encode($0.value))\"" }
        return "OAuth " + fields.joined(separator: ", ")
    }

    /// The base64 HMAC-SHA1 signature over the signature base string.
    public func signature(method: String, url: String, parameters: [FormField], oauth: [String: String]) -> String {
        let base = Self.baseString(method: method, url: url, parameters: parameters + oauth.map { FormField(name: $0.key, value: $0.value) })
        let key = PercentEncoding.encode(consumerSecret) + "&" + PercentEncoding.encode(tokenSecret)
        return Base64.encode(HMAC.sha1(key: Array(key.utf8), message: Array(base.utf8)))
    }

    /// RFC 5849 §3.4.1: method, base URI and normalised parameters, each percent-encoded.
    /// Query parameters in `url` are included; `oauth_signature` never is.
    public static func baseString(method: String, url: String, parameters: [FormField]) -> String {
        var all = parameters.filter { $0.name != "oauth_signature" }
        var baseURI = url
        if let question = url.firstIndex(of: "?") {
            baseURI = String(url[..<question])
            all += FormField.parse(url[url.index(after: question)...]) ?? []
        }
        if let hash = baseURI.firstIndex(of: "#") { baseURI = String(baseURI[..<hash]) }
        let encoded: [(name: String, value: String)] = all.map { (PercentEncoding.encode($0.name), PercentEncoding.encode($0.value)) }
        let sorted = encoded.sorted { lhs, rhs in lhs.name == rhs.name ? lhs.value < rhs.value : lhs.name < rhs.name }
        let normalised = sorted.map { $0.name + "=" + $0.value }.joined(separator: "&")
        return method.uppercased() + "&" + PercentEncoding.encode(normalisedBaseURI(baseURI)) + "&" + PercentEncoding.encode(normalised)
    }

    /// Lowercase scheme and host, default ports dropped (§3.4.1.2).
    static func normalisedBaseURI(_ text: String) -> String {
        guard let separator = text.firstRange(of: "://") else { return text }
        let scheme = text[..<separator.lowerBound].lowercased()
        let rest = text[separator.upperBound...]
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<slash].lowercased()
        if (scheme == "http" && authority.hasSuffix(":80")) || (scheme == "https" && authority.hasSuffix(":443")) {
            authority = String(authority[..<(authority.lastIndex(of: ":") ?? authority.endIndex)])
        }
        let path = rest[slash...]
        return scheme + "://" + authority + (path.isEmpty ? "/" : String(path))
    }
}
