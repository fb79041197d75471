import GatehouseCore
import GatehouseCrypto
import JOSE
import Testing

/// apple.md §6's end-to-end known answers: tokens Apple signed, verified with Apple's rules
/// (RS256 only, Apple's issuer, the app's audience) at a clock inside their window.
@Suite("Genuine Apple tokens")
struct AppleKnownAnswerTests {
    static let issuer = "https://appleid.apple.com"
    let keys = KeySet(try! JWKSet.decode(Array(AppleKnownAnswers.keySet.utf8)))

    func verifier(audience: String, at now: Int64, subject: Bool = true) -> JWTVerifier {
        var verifier = JWTVerifier(issuer: Self.issuer, audience: audience, algorithms: [.rs256], now: { now })
        verifier.requiresSubject = subject
        return verifier
    }

    @Test("Apple's identity token verifies against Apple's key at its issue time")
    func identityToken() throws {
        let claims = try verifier(audience: "jp.yauth.signin.service2", at: AppleKnownAnswers.identityTokenIssuedAt)
            .verify(AppleKnownAnswers.identityToken, keys: keys)
        #expect(claims.sub == "000723.25da8be332964991898630947202fef0.0402")
        #expect(claims.aud == ["jp.yauth.signin.service2"])
        #expect(claims.raw["at_hash"] == "zjRiT7d3TqQ5S7pFdo6qXg")
    }

    @Test("Apple's identity token is refused for another app, after expiry, or with a changed signature byte")
    func identityTokenRefusals() {
        let issued = AppleKnownAnswers.identityTokenIssuedAt
        #expect(throws: JOSEError.self) {
            try verifier(audience: "com.example.other", at: issued).verify(AppleKnownAnswers.identityToken, keys: keys)
        }
        #expect(throws: JOSEError.self) {
            try verifier(audience: "jp.yauth.signin.service2", at: issued + 600 + 61).verify(AppleKnownAnswers.identityToken, keys: keys)
        }
        var tampered = Array(AppleKnownAnswers.identityToken.utf8)
        let middle = tampered.count - 100
        tampered[middle] = tampered[middle] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(throws: JOSEError.self) {
            try verifier(audience: "jp.yauth.signin.service2", at: issued).verify(String(decoding: tampered, as: UTF8.self), keys: keys)
        }
    }

    @Test("Apple's consent-revoked notification verifies, and its events string parses")
    func notification() throws {
        let claims = try verifier(audience: "jp.yauth.signin.app", at: AppleKnownAnswers.notificationIssuedAt, subject: false)
            .verify(AppleKnownAnswers.notification, keys: keys)
        #expect(claims.raw["jti"] == "S25cB0PbHs6y97gYYmgydQ")
        let events = try #require(claims.raw["events"]?.stringValue.flatMap { JSONValue.parse(Array($0.utf8)) })
        #expect(events["type"] == "consent-revoked")
        #expect(events["sub"] == "000768.6166f031167141e695698239959f591a.1521")
        #expect(throws: JOSEError.self) {
            try verifier(audience: "jp.yauth.signin.app", at: 1_657_703_492 + 61, subject: false)
                .verify(AppleKnownAnswers.notification, keys: keys)
        }
    }
}
