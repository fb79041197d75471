import GatehouseCore
import GatehouseCrypto
import JOSE
import Testing

@Suite("JWTs MACed with a client secret")
struct MACTokenTests {
    static let now: Int64 = 1_700_000_000
    static let secret = Array("s3cret-of-client-1".utf8)
    let verifier = JWTVerifier(issuer: "https://issuer.example", audience: "client-1", now: { MACTokenTests.now })

    static func token(_ header: String = #"{"alg":"HS256","typ":"JWT"}"#, secret: [UInt8] = secret, algorithm: MACAlgorithm = .hs256) throws -> String {
        let claims: JSONObject = [
            "iss": "https://issuer.example", "aud": "client-1", "sub": "user-1", "nonce": "n-1",
            "iat": .number(Double(now - 10)), "exp": .number(Double(now + 600)),
        ]
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(JSONValue.object(claims).serialized())
        return input + "." + Base64URL.encode(algorithm.code(key: secret, message: Array(input.utf8)))
    }

    @Test("RFC 7515 A.1: the HS256 example's MAC verifies with its published key")
    func rfc7515A1() throws {
        let key = try #require(Base64URL.decode("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"))
        let token = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9." + RFC7515.payload + ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        // The example has no aud: reaching the claims means the MAC held.
        let joe = JWTVerifier(issuer: "joe", audience: "client-1", now: { 1_300_819_000 })
        #expect(throws: JOSEError.claimMismatch("aud", "the token's audience (aud) is not client-1")) {
            try joe.verifiedToken(token, secret: key, algorithms: [.hs256])
        }
        #expect(throws: JOSEError.badSignature("the signature does not verify")) {
            try joe.verifiedToken(token, secret: Array(key.dropFirst()), algorithms: [.hs256])
        }
    }

    @Test("a token MACed with the secret yields its claims; every other secret, algorithm or header is refused")
    func refusals() throws {
        let verified = try verifier.verifiedToken(try Self.token(), secret: Self.secret, algorithms: [.hs256], nonce: "n-1")
        #expect(verified.claims.sub == "user-1")
        let hs512 = try Self.token(#"{"alg":"HS512"}"#, algorithm: .hs512)
        #expect(try verifier.verifiedToken(hs512, secret: Self.secret, algorithms: [.hs256, .hs512]).claims.sub == "user-1")
        #expect(throws: JOSEError.unsupportedAlgorithm("alg HS512 is not allowed here")) {
            try verifier.verifiedToken(hs512, secret: Self.secret, algorithms: [.hs256])
        }
        #expect(throws: JOSEError.badSignature("the signature does not verify")) {
            try verifier.verifiedToken(try Self.token(secret: Array("another".utf8)), secret: Self.secret, algorithms: [.hs256])
        }
        #expect(throws: JOSEError.unknownKey("no client secret to check an HS256 token with")) {
            try verifier.verifiedToken(try Self.token(secret: []), secret: [], algorithms: [.hs256])
        }
        #expect(throws: JOSEError.unsupportedAlgorithm("alg RS256 is not allowed here")) {
            try verifier.verifiedToken(try Self.token(#"{"alg":"RS256"}"#), secret: Self.secret, algorithms: [.hs256])
        }
        #expect(throws: JOSEError.unsupportedAlgorithm("unsigned tokens (alg none) are never accepted")) {
            try verifier.verifiedToken(try Self.token(#"{"alg":"none"}"#), secret: Self.secret, algorithms: [.hs256])
        }
        #expect(throws: JOSEError.malformed("the header has critical extensions (crit), none of which are supported")) {
            try verifier.verifiedToken(try Self.token(#"{"alg":"HS256","crit":["x"],"x":1}"#), secret: Self.secret, algorithms: [.hs256])
        }
        #expect(throws: JOSEError.claimMismatch("nonce", "the token's nonce is not the one sent with the request")) {
            try verifier.verifiedToken(try Self.token(), secret: Self.secret, algorithms: [.hs256], nonce: "n-2")
        }
        #expect(JWTVerifier.algorithmName(of: try Self.token()) == "HS256")
        #expect(JWTVerifier.algorithmName(of: "not.a-token") == nil)
    }

    @Test("an HS256 token is never checked against a key set, whatever key it names")
    func neverThroughKeySet() throws {
        let rsa = try PrivateKey(pem: TestKeys.first).publicKey
        let keys = KeySet([KeySet.Key(kid: "k1", algorithm: nil, publicKey: rsa)])
        let token = try Self.token(#"{"alg":"HS256","kid":"k1"}"#)
        #expect(throws: JOSEError.unsupportedAlgorithm("alg HS256 is not allowed here")) {
            try verifier.verify(token, keys: keys)
        }
    }
}
