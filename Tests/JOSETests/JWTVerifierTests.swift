import GatehouseCore
import GatehouseCrypto
import JOSE
import Testing

@Suite("JWT verification")
struct JWTVerifierTests {
    static let now: Int64 = 1_700_000_000
    let first: PrivateKey
    let second: PrivateKey
    let keys: KeySet
    let verifier = JWTVerifier(issuer: "https://issuer.example", audience: "client-1", algorithms: [.es256], now: { JWTVerifierTests.now })

    init() throws {
        first = try PrivateKey(pem: TestKeys.first)
        second = try PrivateKey(pem: TestKeys.second)
        keys = KeySet([
            KeySet.Key(kid: "k1", algorithm: .es256, publicKey: first.publicKey),
            KeySet.Key(kid: "k2", algorithm: nil, publicKey: second.publicKey),
        ])
    }

    static let standardClaims: JSONObject = [
        "iss": "https://issuer.example", "aud": "client-1", "sub": "user-1",
        "iat": .number(Double(now - 10)), "exp": .number(Double(now + 600)), "nonce": "n-0S6_WzA2Mj",
        "email": "user@example.com", "email_verified": "true", "locale": "en",
    ]

    /// A token from `key` under `kid` with the standard claims, changed by `edit`.
    func token(kid: String? = "k1", key: PrivateKey? = nil, _ edit: (inout JSONObject) -> Void = { _ in }) throws -> String {
        var claims = Self.standardClaims
        edit(&claims)
        let header = kid.map { #"{"alg":"ES256","kid":"\#($0)"}"# } ?? #"{"alg":"ES256"}"#
        return try TestKeys.token(header: header, claims: TestKeys.json(claims), key: key ?? first)
    }

    @Test("a valid token yields its typed claims and the raw payload")
    func valid() throws {
        let claims = try verifier.verify(token(), keys: keys, nonce: "n-0S6_WzA2Mj")
        #expect(claims.iss == "https://issuer.example" && claims.sub == "user-1" && claims.aud == ["client-1"])
        #expect(claims.exp == Self.now + 600 && claims.iat == Self.now - 10)
        #expect(claims.email == "user@example.com" && claims.emailVerified == true)
        #expect(claims.raw["locale"] == "en")
        _ = try verifier.verify(token(), keys: keys)
    }

    @Test("iss, aud and sub must match")
    func identityClaims() throws {
        #expect(throws: JOSEError.claimMismatch("iss", "")) { try verifier.verify(token { $0["iss"] = "https://evil.example" }, keys: keys) }
        #expect(throws: JOSEError.claimMismatch("iss", "")) { try verifier.verify(token { $0["iss"] = nil }, keys: keys) }
        #expect(throws: JOSEError.claimMismatch("aud", "")) { try verifier.verify(token { $0["aud"] = "client-2" }, keys: keys) }
        #expect(throws: JOSEError.claimMismatch("aud", "")) { try verifier.verify(token { $0["aud"] = ["client-2", "client-3"] }, keys: keys) }
        #expect(throws: JOSEError.claimMismatch("aud", "")) { try verifier.verify(token { $0["aud"] = nil }, keys: keys) }
        #expect(throws: JOSEError.claimMismatch("sub", "")) { try verifier.verify(token { $0["sub"] = "" }, keys: keys) }
        #expect(throws: JOSEError.malformed("")) { try verifier.verify(token { $0["aud"] = 7 }, keys: keys) }
        _ = try verifier.verify(token { $0["aud"] = ["client-2", "client-1"] }, keys: keys)
        let several = JWTVerifier(
            issuer: "https://issuer.example", audiences: ["com.example.ios", "client-1"], algorithms: [.es256], now: { Self.now })
        _ = try several.verify(token(), keys: keys)
        _ = try several.verify(token { $0["aud"] = "com.example.ios" }, keys: keys)
    }

    @Test("exp, nbf and iat are checked against the clock with the leeway")
    func timeClaims() throws {
        #expect(throws: JOSEError.expired("")) { try verifier.verify(token { $0["exp"] = .number(Double(Self.now - 61)) }, keys: keys) }
        _ = try verifier.verify(token { $0["exp"] = .number(Double(Self.now - 59)) }, keys: keys)
        #expect(throws: JOSEError.claimMismatch("exp", "")) { try verifier.verify(token { $0["exp"] = nil }, keys: keys) }
        #expect(throws: JOSEError.notYetValid("")) { try verifier.verify(token { $0["nbf"] = .number(Double(Self.now + 61)) }, keys: keys) }
        _ = try verifier.verify(token { $0["nbf"] = .number(Double(Self.now + 59)) }, keys: keys)
        #expect(throws: JOSEError.notYetValid("")) { try verifier.verify(token { $0["iat"] = .number(Double(Self.now + 120)) }, keys: keys) }
        _ = try verifier.verify(token { $0["iat"] = .number(Double(Self.now + 30)) }, keys: keys)

        var strict = verifier
        strict.leeway = 0
        #expect(throws: JOSEError.expired("")) { try strict.verify(token { $0["exp"] = .number(Double(Self.now)) }, keys: keys) }
        #expect(throws: JOSEError.notYetValid("")) { try strict.verify(token { $0["nbf"] = .number(Double(Self.now + 1)) }, keys: keys) }
        _ = try strict.verify(token { $0["exp"] = .number(Double(Self.now + 1)) }, keys: keys)

        // A signed UserInfo answer need not expire, but one that carries exp is held to it.
        var lasting = verifier
        lasting.requiresExpiry = false
        _ = try lasting.verify(token { $0["exp"] = nil }, keys: keys)
        #expect(throws: JOSEError.expired("")) { try lasting.verify(token { $0["exp"] = .number(Double(Self.now - 61)) }, keys: keys) }
    }

    @Test("an expected nonce must be present and equal")
    func nonce() throws {
        #expect(throws: JOSEError.claimMismatch("nonce", "")) { try verifier.verify(token(), keys: keys, nonce: "other") }
        #expect(throws: JOSEError.claimMismatch("nonce", "")) { try verifier.verify(token { $0["nonce"] = nil }, keys: keys, nonce: "n-0S6_WzA2Mj") }
        _ = try verifier.verify(token { $0["nonce"] = nil }, keys: keys)
    }

    @Test("the key is chosen by kid, its alg restriction and its type")
    func keySelection() throws {
        _ = try verifier.verify(token(kid: "k2", key: second), keys: keys)
        #expect(throws: JOSEError.badSignature("")) { try verifier.verify(token(kid: "k1", key: second), keys: keys) }
        #expect(throws: JOSEError.unknownKey("")) { try verifier.verify(token(kid: "k3"), keys: keys) }
        // Without a kid every fitting key is tried, unless the issuer always names its key.
        _ = try verifier.verify(token(kid: nil, key: second), keys: keys)
        var namingKeys = verifier
        namingKeys.requiresKeyID = true
        #expect(throws: JOSEError.malformed("")) { try namingKeys.verify(token(kid: nil, key: second), keys: keys) }
        _ = try namingKeys.verify(token(kid: "k2", key: second), keys: keys)
        let other = try PrivateKey(pem: TestKeys.first)
        #expect(throws: JOSEError.badSignature("")) {
            try verifier.verify(token(kid: nil, key: other), keys: KeySet([KeySet.Key(kid: "k2", algorithm: nil, publicKey: second.publicKey)]))
        }
        // A key restricted to another algorithm, or of another type, is not a candidate.
        let restricted = KeySet([KeySet.Key(kid: "k1", algorithm: .es384, publicKey: first.publicKey)])
        #expect(throws: JOSEError.unknownKey("")) { try verifier.verify(token(), keys: restricted) }
        let rsa = KeySet(try JWKSet.decode(Array(#"{"keys":[{"kty":"RSA","kid":"k1","n":"\#(RFC7515.A2.n)","e":"AQAB"}]}"#.utf8)))
        #expect(throws: JOSEError.unknownKey("")) { try verifier.verify(token(), keys: rsa) }
        #expect(throws: JOSEError.unknownKey("")) { try verifier.verify(token(), keys: KeySet([])) }
    }

    @Test("algorithms outside the verifier's list are refused even when a key would fit")
    func algorithmList() throws {
        let rsaOnly = JWTVerifier(issuer: "https://issuer.example", audience: "client-1", now: { Self.now })
        #expect(throws: JOSEError.unsupportedAlgorithm("")) { try rsaOnly.verify(token(), keys: keys) }
        let jws = try JWS(compact: token(), allowedAlgorithms: [.es256])
        #expect(throws: JOSEError.unsupportedAlgorithm("")) { try rsaOnly.verify(jws, keys: keys) }
    }

    @Test("reasons never carry the token, and token-supplied kids are defanged")
    func reasonsAreSafe() throws {
        let tokens = [
            try token { $0["iss"] = "https://evil.example" }, try token { $0["exp"] = 5 }, try token(kid: "k3"),
            try token(kid: "k1", key: second), try token { $0["nonce"] = "nonce-from-token" },
        ]
        for token in tokens {
            do {
                _ = try verifier.verify(token, keys: keys, nonce: "expected-nonce")
                Issue.record("accepted a bad token")
            } catch {
                for part in token.split(separator: ".") {
                    #expect(!error.reason.contains(part) && !error.description.contains(part))
                }
                #expect(!error.reason.contains("evil") && !error.reason.contains("nonce-from-token"))
            }
        }
        let hostile = try TestKeys.token(header: #"{"alg":"ES256","kid":"a\nb\u0000<script>"}"#, claims: "{}", key: first)
        #expect {
            try verifier.verify(hostile, keys: keys)
        } throws: { error in
            let reason = (error as? JOSEError)?.reason ?? ""
            return (error as? JOSEError) == .unknownKey("") && reason.contains("a?b??script?") && !reason.contains("\n")
        }
    }
}
