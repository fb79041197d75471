internal import GatehouseCore
internal import HTTPServer
internal import ProviderEngine

/// The `oauthio` header the SDKs send to `/request` and `me` (oauthd-protocol.md §1.2): a
/// query string with the app's public key, the user's token and the `request.required`
/// extras. iOS sends it unencoded, the JS SDK encoded; some clients encode the whole value.
struct OAuthioHeader: Sendable {
    let key: String
    var version: OAuthVersion
    /// Every field, decoded: `{{x}}` placeholders of the provider's request block read them.
    let fields: [String: String]

    /// The OAuth 2 token (`access_token`, or `token`), or the OAuth 1 `oauth_token`.
    var token: String? {
        switch version {
        case .oauth2: fields["access_token"] ?? fields["token"]
        case .oauth1: fields["oauth_token"] ?? fields["token"]
        }
    }

    var tokenSecret: String { fields["oauth_token_secret"] ?? fields["token_secret"] ?? "" }

    /// Parses the header, or returns the JSend answer OAuth.io gives for each problem.
    static func parse(_ request: HTTPRequest) -> Result<OAuthioHeader, Refusal> {
        guard var text = request.headers["oauthio"], !text.isEmpty, text.utf8.count <= 16_384 else {
            return .failure(Refusal(JSend.error(400, "You must provide a valid 'oauthio' http header")))
        }
        // A wholly encoded value (`k%3D…%26access_token%3D…`) has no literal `=`.
        if !text.utf8.contains(UInt8(ascii: "=")), text.lowercased().contains("%3d"), let decoded = PercentEncoding.decode(text) {
            text = decoded
        }
        var fields: [String: String] = [:]
        // Unencoded values (iOS) may hold a stray `%`: such a value is kept as sent.
        for field in FormField.parseKeepingMalformed(text) where fields[field.name] == nil {
            fields[field.name] = field.value
        }
        // Everything here can end up in a URL or a header upstream.
        guard fields.allSatisfy({ !ForwardingRules.hasControlCharacters($0.key) && !ForwardingRules.hasControlCharacters($0.value) }) else {
            return .failure(Refusal(JSend.error(400, "The 'oauthio' header contains control characters")))
        }
        guard let key = fields["k"], !key.isEmpty else {
            return .failure(Refusal(JSend.fail(400, field: "oauthio_key", "You must provide a 'k' (your app public key) in 'oauthio' header")))
        }
        let version: OAuthVersion = fields["oauthv"] == "1" ? .oauth1 : .oauth2
        return .success(OAuthioHeader(key: key, version: version, fields: fields))
    }
}

/// An answer decided before any upstream call: a refusal carries the response to send.
struct Refusal: Error, Sendable {
    let response: HTTPResponse

    init(_ response: HTTPResponse) {
        self.response = response
    }
}
