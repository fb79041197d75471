import Foundation

/// A local stand-in for Sign in with Apple's server API: `Tests/Fixtures/mock_apple.py` run as a
/// python3 child process on 127.0.0.1. It serves `/auth/authorize` (form_post, first-consent
/// `user`), `/auth/token` (ES256 client_secret JWT, code and refresh grants), `/auth/revoke`,
/// `/auth/keys` (RS256 JWKS with rotation) and sends server-to-server notifications; see
/// `Tests/Fixtures/README.md`. `baseURL` is also the issuer, and the `aud` the mock expects in
/// client_secret JWTs (real Apple: https://appleid.apple.com). Start one per test so state never mixes.
public final class MockApple: FixtureServer, @unchecked Sendable {
    public static let teamID = "TEAM123456"
    public static let keyID = "KEY1234567"
    /// The web client_id (Services ID).
    public static let servicesID = "com.example.web"
    /// The native client_id (bundle ID) a native credential is issued for by default.
    public static let bundleID = "com.example.app"
    /// A second registered bundle ID, for multi-audience tests.
    public static let watchBundleID = "com.example.watch"
    /// The `sub` of the mock's only user.
    public static let subject = "000723.25da8be3e0fb4ad0a9c1a82b1bc3fef0.0402"
    public static let email = "ada@privaterelay.appleid.com"
    /// The `user` JSON string sent on the first consent (web) or with `firstLogin` (native).
    public static let firstLoginUser = #"{"name":{"firstName":"Ada","lastName":"Lovelace"},"email":"ada@privaterelay.appleid.com"}"#
    /// The kids of the mock's two RSA signing keys; the first signs until a rotation.
    public static let signingKeyIDs = ["mockApple1", "mockApple2"]

    /// The .p8 the mock trusts for client_secret JWTs: the RFC 7515 appendix A.3 P-256 key as
    /// unencrypted PKCS#8 PEM (apple.md section 6). Test data only.
    public static let privateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgjpsQnnGQmL+YBIff
        H1136cspYG6+0iY7X1fCE9+E9LKhRANCAAR/zc4ncPbEXUGDy+5v20t7WAczNXvp
        7xO6z248e9FURcfxRM0bvZt+hyzf7bnuufSzaV1uqQskrYpGIyiFiOWt
        -----END PRIVATE KEY-----

        """

    /// A second developer registered with the mock (its own team, key and ids), for tests
    /// where one app must get nothing Apple gave another. Only `/auth/token` and
    /// `/auth/revoke` know it: no native credential or web sign-in is issued for its ids.
    public enum SecondTeam {
        public static let teamID = "TEAM654321"
        public static let keyID = "KEY7654321"
        public static let servicesID = "com.second.web"
        public static let bundleID = "com.second.app"
        /// Its .p8: a P-256 key made for these tests only.
        public static let privateKeyPEM = """
            -----BEGIN PRIVATE KEY-----
            MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgJtVTugQCgW1ri3Ri
            Afo0POgGh1mGiJKrJGsYJu1+HDWhRANCAARsjWbuAD9y1k3x6EWZhf5Bax1pCyGd
            tBJiKwZRwVEr9uf9zhF+hA47Q+aoMa9Te3LjpFELvMI2MzoJi30tvalb
            -----END PRIVATE KEY-----

            """
    }

    /// Launches `python3 Tests/Fixtures/mock_apple.py --port 0` and waits for its `PORT <n>`
    /// line on a thread of its own, never on the cooperative pool.
    public static func start() async throws -> MockApple {
        try await offPool { MockApple(child: try MockProcess(scriptName: "mock_apple.py", name: "mock Apple")) }
    }

    // MARK: - Test helpers (the script's `/_` endpoints)

    /// `POST /_native`: what a native app gets from ASAuthorizationAppleIDCredential. The
    /// identity token is RS256 with `aud` = `clientID`, `c_hash` over the code, and `nonce` when
    /// given (pass it exactly as the app would set `request.nonce`). The code is single use, bound
    /// to `clientID`, and must be exchanged without `redirect_uri`. `user` is
    /// `firstLoginUser` when `firstLogin`.
    public func nativeCredential(
        clientID: String = MockApple.bundleID, nonce: String? = nil, firstLogin: Bool = true
    ) async throws -> (identityToken: String, authorizationCode: String, user: String?) {
        var query = "client_id=\(Self.queryEncoded(clientID))&first=\(firstLogin ? "1" : "0")"
        if let nonce { query += "&nonce=\(Self.queryEncoded(nonce))" }
        let object = try await child.controlJSON("POST /_native?\(query)")
        guard let token = object["identity_token"] as? String, let code = object["authorization_code"] as? String else {
            throw MockProviderError("/_native returned \(object)")
        }
        return (token, code, object["user"] as? String)
    }

    /// `POST /_sign`: a compact JWS over `claims` (a JSON object text, signed byte for byte in
    /// its member order). `header` (JSON object text) is merged over the default
    /// `{"kid":<key's kid>,"alg":"RS256"}`; a `null` member removes one. `key` is "current", "old"
    /// (the other RSA key) or "none" (`alg` none, empty signature). With `template` "id_token" the
    /// claims are merged over a fresh valid native identity token's (null removes a claim).
    public func sign(claims: String, header: String? = nil, key: String = "current", template: String? = nil)
        async throws -> String
    {
        var body = #"{"claims":"# + claims
        if let header { body += #","header":"# + header }
        body += #","key":"# + Self.jsonString(key)
        if let template { body += #","template":"# + Self.jsonString(template) }
        body += "}"
        let response = try await child.control("POST /_sign", json: body)
        return response.text
    }

    /// `POST /_rotate?publish=now|later`: tokens are signed with the other key from now on. With
    /// `publish` the JWKS serves only the new key at once; without it the JWKS keeps serving the
    /// old set until `publish()`, so an unknown-kid refetch still misses.
    public func rotate(publish: Bool) async throws {
        _ = try await child.control("POST /_rotate?publish=\(publish ? "now" : "later")", form: "")
    }

    /// `POST /_rotate?publish=both`: signs with the other key and serves both, old key first,
    /// which catches a client that takes `keys[0]` instead of matching the kid.
    public func rotateKeepingOldKey() async throws {
        _ = try await child.control("POST /_rotate?publish=both", form: "")
    }

    /// `POST /_publish`: the JWKS now serves only the current key.
    public func publish() async throws {
        _ = try await child.control("POST /_publish", form: "")
    }

    /// `POST /_fail_keys?count=n`: the next `count` `/auth/keys` fetches answer 503.
    public func failKeyFetches(count: Int) async throws {
        _ = try await child.control("POST /_fail_keys?count=\(count)", form: "")
    }

    /// The webhook an app backend would expose for forwarded notifications.
    public var webhookURL: String { baseURL + "/_webhook" }

    /// `POST /_fail_webhook?count=n`: the next `count` webhook deliveries answer 503.
    public func failWebhook(count: Int) async throws {
        _ = try await child.control("POST /_fail_webhook?count=\(count)", form: "")
    }

    /// `GET /_webhooks`: the events the webhook accepted, oldest first, as (type, sub).
    public func webhookEvents() async throws -> [(type: String, sub: String)] {
        let object = try await child.controlJSON("GET /_webhooks")
        let received = object["received"] as? [[String: Any]] ?? []
        return received.map { (type: $0["type"] as? String ?? "", sub: $0["sub"] as? String ?? "") }
    }

    /// `POST /_notify`: sends a server-to-server notification to `gatewayURL` and returns the
    /// gateway's HTTP status.
    public func notify(gatewayURL: String, aud: String, type: String, sub: String, email: String? = nil)
        async throws -> Int
    {
        try await notification(gatewayURL: gatewayURL, aud: aud, type: type, sub: sub, email: email).status
    }

    /// As `notify`, also returning the `jti` and the JWS sent, so a test can deliver a duplicate.
    public func notification(gatewayURL: String, aud: String, type: String, sub: String, email: String? = nil)
        async throws -> (status: Int, jti: String, payload: String)
    {
        var body = #"{"url":"# + Self.jsonString(gatewayURL) + #","aud":"# + Self.jsonString(aud)
        body += #","type":"# + Self.jsonString(type) + #","sub":"# + Self.jsonString(sub)
        if let email { body += #","email":"# + Self.jsonString(email) }
        body += "}"
        let object = try await child.controlJSON("POST /_notify", json: body)
        guard let status = (object["status"] as? NSNumber)?.intValue, let jti = object["jti"] as? String,
            let payload = object["payload"] as? String
        else {
            throw MockProviderError("/_notify returned \(object)")
        }
        return (status, jti, payload)
    }

    /// `GET /_stats`: "authorize", "token_code", "token_refresh", "revoke", "keys",
    /// "invalid_client", "discovery", plus "refresh_calls.<refresh token>" for each refresh
    /// token used in a refresh_token grant.
    public func stats() async throws -> [String: Int] {
        let object = try await child.controlJSON("GET /_stats")
        var counters: [String: Int] = [:]
        for (name, value) in object {
            if let number = MockProcess.integer(value) {
                counters[name] = number
            } else if name == "refresh_calls", let calls = value as? [String: Any] {
                for (token, count) in calls {
                    if let count = MockProcess.integer(count) { counters["refresh_calls.\(token)"] = count }
                }
            }
        }
        return counters
    }

    /// Why the last client authentication failed ("" if none has), from `GET /_stats`.
    public func lastInvalidClientReason() async throws -> String {
        try await child.controlJSON("GET /_stats")["last_invalid_client"] as? String ?? ""
    }

    /// `POST /_reset`: forgets codes, tokens, consents and counters; the first key signs again.
    public func reset() async throws {
        _ = try await child.control("POST /_reset", form: "")
    }

    // MARK: - Plumbing

    /// Percent-encodes everything but RFC 3986 unreserved characters.
    static func queryEncoded(_ value: String) -> String {
        var allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    /// A JSON string literal for `value`.
    static func jsonString(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
