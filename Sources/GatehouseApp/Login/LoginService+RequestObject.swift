internal import GatehouseCore
internal import GatehouseCrypto
internal import JOSE
internal import ProviderEngine

extension LoginService {
    /// How long a request object is good for: Duo accepts at most five minutes.
    static let requestObjectLifetime: Int64 = 300

    /// RFC 9101: the parameters of `authorizeURL` become the claims of a signed request object,
    /// which the URL then carries as `request`, beside only the parameters the rule keeps in the
    /// clear (OpenID Connect Core §6.1 wants `client_id`, `response_type` and `scope` there too).
    /// With `encryption`, the signed object travels inside a JWE to the provider's published key.
    func requestObjectURL(
        _ authorizeURL: String, rule: RequestObjectRule, openid: OpenIDDefinition?, templates: TemplateContext
    ) async throws(ClientAssertionError) -> String {
        let (base, query) = Self.splitQuery(authorizeURL)
        let fields = FormField.parse(query) ?? []
        var claims: JSONObject = [:]
        for field in fields { claims[field.name] = .string(field.value) }
        for (name, value) in rule.claims { claims[name] = value.stringValue.map { .string(Template.render($0, templates)) } ?? value }
        guard let jti = try? SecureRandom.identifier() else { throw ClientAssertionError("no random bytes for the jti") }
        let now = Timestamp.now()
        claims["iss"] = .string(templates.keysetValue("client_id"))
        let rendered = openid?.rendered(templates)
        claims["aud"] = .string(rule.audience.map { Template.render($0, templates) } ?? rendered?.issuer ?? "")
        claims["jti"] = .string(jti)
        claims["iat"] = .number(Double(now))
        claims["nbf"] = .number(Double(now))
        claims["exp"] = .number(Double(now + Self.requestObjectLifetime))
        let withSecret = rule.algorithm.map(OpenIDDefinition.macAlgorithms.contains) ?? false
        var token = try assertions.signed(.object(claims), type: "oauth-authz-req+jwt", algorithm: rule.algorithm, withSecret: withSecret, templates)
        if let encryption = rule.encryption, let jwksURI = rendered?.jwksURI {
            token = try await encryptedRequestObject(token, encryption: encryption, jwksURI: jwksURI)
        }
        let kept = fields.filter { rule.query.contains($0.name) } + [FormField(name: "request", value: token)]
        return base + "?" + PercentEncoding.formEncoded(kept.lazy.map { ($0.name, $0.value) })
    }

    /// `token` as the content of a JWE to the provider's encryption key: the first `enc` key in
    /// its key set that allows the rule's algorithm.
    private func encryptedRequestObject(
        _ token: String, encryption: RequestObjectEncryption, jwksURI: String
    ) async throws(ClientAssertionError) -> String {
        let alg = encryption.keyAlgorithm
        let fits: @Sendable (KeySet.EncryptionKey) -> Bool = { $0.algorithm == nil || $0.algorithm == alg.rawValue }
        let keys: KeySet
        do throws(JOSEError) {
            // A set without such a key is refetched (rate limited) like one missing a kid, so a
            // key the provider has just added is picked up.
            keys = try await verifier.cache.keys(for: jwksURI, holding: { $0.encryptionKeys.contains(where: fits) })
        } catch {
            throw ClientAssertionError("the provider's key set is unavailable: \(error.reason)")
        }
        guard let key = keys.encryptionKeys.first(where: fits) else {
            throw ClientAssertionError("the provider's key set has no RSA encryption key for \(alg.rawValue)")
        }
        do throws(JOSEError) {
            return try JWE.encrypt(Array(token.utf8), to: key.key, keyID: key.kid, alg: alg, enc: encryption.contentAlgorithm, contentType: "JWT")
        } catch {
            throw ClientAssertionError(error.reason)
        }
    }

    /// A URL cut at its `?`: what comes before, and the query (empty if none).
    static func splitQuery(_ url: String) -> (base: String, query: String) {
        guard let question = url.firstIndex(of: "?") else { return (url, "") }
        return (String(url[..<question]), String(url[url.index(after: question)...]))
    }
}
