internal import GatehouseCore

/// OAuth.io's "extended" provider: the definition with every default filled in, which is
/// what the flows run and what `/api/providers/:id?extend=true` shows.
extension ProviderDefinition {
    /// Fills in the normalised blocks once, when the definition is read: every login reads
    /// them, and rebuilding the default queries per request would be wasted work.
    mutating func normalise() {
        normalisedOAuth2 = makeNormalisedOAuth2()
        normalisedOAuth1 = makeNormalisedOAuth1()
        callbackCarriesState = makeCallbackCarriesState()
        requestFlowFields = RequestFlowFields(
            oauth2: normalisedOAuth2?.request.map(Self.requiredFields) ?? [], oauth1: normalisedOAuth1?.request.map(Self.requiredFields) ?? [])
    }

    /// The OAuth 2 block with default queries, PKCE and OpenID additions applied.
    func makeNormalisedOAuth2() -> OAuth2Definition? {
        guard var oauth2 else { return nil }
        let hasScope = oauth2.parameters["scope"] != nil
        if oauth2.authorize.query == nil {
            oauth2.authorize.query = [
                "client_id": "{client_id}", "response_type": "code", "redirect_uri": "{{callback}}", "scope": "{scope}",
                "state": "{{state}}",
            ]
        }
        if let method = oauth2.pkce {
            oauth2.authorize.query?["code_challenge"] = "{{code_challenge}}"
            oauth2.authorize.query?["code_challenge_method"] = method.rawValue
        }
        if openid != nil, oauth2.authorize.query?["nonce"] == nil {
            oauth2.authorize.query?["nonce"] = "{{nonce}}"
        }
        if !hasScope { oauth2.authorize.query = oauth2.authorize.query?.filter { $0.value != "{scope}" } }
        let credentials = Self.clientCredentials(oauth2.clientAuthentication)
        if oauth2.accessToken.query == nil {
            oauth2.accessToken.query = ["redirect_uri": "{{callback}}", "grant_type": "authorization_code", "code": "{{code}}"]
                .merging(credentials) { own, _ in own }
        }
        if oauth2.pkce != nil { oauth2.accessToken.query?["code_verifier"] = "{{code_verifier}}" }
        if var refresh = oauth2.refresh, refresh.query == nil {
            refresh.query = ["grant_type": "refresh_token", "refresh_token": "{{refresh_token}}"].merging(credentials) { own, _ in own }
            oauth2.refresh = refresh
        }
        if var revoke = oauth2.revoke, revoke.query == nil {
            revoke.query = ["token": "{{token}}"].merging(credentials) { own, _ in own }
            oauth2.revoke = revoke
        }
        oauth2.request = Self.normalisedRequest(oauth2.request, base: url, scheme: oauth2.dpop ? "DPoP" : "Bearer")
        return oauth2
    }

    /// What a default token, refresh or revoke body carries to authenticate the app: Basic
    /// authentication carries nothing there, an assertion is minted per call as a flow value.
    public static func clientCredentials(_ authentication: ClientAuthentication) -> [String: String] {
        switch authentication {
        case .body: ["client_id": "{client_id}", "client_secret": "{client_secret}"]
        case .basic: [:]
        case .privateKeyJWT, .clientSecretJWT:
            [
                "client_id": "{client_id}", "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                "client_assertion": "{{client_assertion}}",
            ]
        }
    }

    /// The OAuth 1 block with its request-token default applied.
    func makeNormalisedOAuth1() -> OAuth1Definition? {
        guard var oauth1 else { return nil }
        if oauth1.requestToken.query == nil { oauth1.requestToken.query = ["oauth_callback": "{{callback}}"] }
        oauth1.request = Self.normalisedRequest(oauth1.request, base: url, scheme: nil)
        return oauth1
    }

    /// Whether `{{state}}` appears nowhere in the authorize step (see `callbackCarriesState`).
    func makeCallbackCarriesState() -> Bool {
        guard let authorize = makeNormalisedOAuth2()?.authorize else { return true }
        let texts = [authorize.url] + Array((authorize.query ?? [:]).values)
        return !texts.contains { Template.references(in: $0).flow.contains("state") }
    }

    /// `request` with a base URL and, for OAuth 2 with neither query nor headers, the token in
    /// an `Authorization` header under `scheme` (`Bearer`, or `DPoP` for a key-bound token).
    private static func normalisedRequest(_ request: Endpoint?, base: String?, scheme: String?) -> Endpoint? {
        var endpoint = request ?? Endpoint(url: base ?? "")
        if endpoint.url.isEmpty { return nil }
        if let scheme, endpoint.query == nil, endpoint.headers == nil {
            endpoint.headers = ["Authorization": scheme + " {{token}}"]
        }
        return endpoint
    }

    /// The flow values `request` needs back from the SDK beyond the token (`instance_url`, …).
    public static func requiredFields(of request: Endpoint) -> [String] {
        var names: Set<String> = []
        for text in [request.url] + Array((request.query ?? [:]).values) + Array((request.headers ?? [:]).values) {
            names.formUnion(Template.references(in: text).flow)
        }
        names.subtract(["token", "token_secret", "access_token", "oauth_token", "oauth_token_secret"])
        return names.sorted()
    }
}
