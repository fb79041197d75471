import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// Identity tokens that differ from a valid one in exactly one way, each refused for its own
/// reason: a row whose check were gone would sign in, or fail on another check's message.
@Suite("Sign in with Apple: rejected identity tokens", .serialized)
struct AppleRejectionTests {
    /// One altered token: `claims` and `header` are merged over the mock's valid native token and
    /// header (null drops a member), `key` signs it, `fields` are added to the otherwise valid
    /// request, and `reason` is the part of the error that names the one check refusing it.
    struct Row: CustomStringConvertible {
        var claims = "{}"
        var header: String?
        var key = "current"
        var fields: [String: String] = [:]
        var reason: String
        var description: String { "\(claims) \(header ?? "") \(key) \(fields)" }
    }

    static func rows(now: Int) -> [Row] {
        [
            Row(claims: #"{"aud":"com.other.app"}"#, reason: "the token's audience (aud) is not com.example.app"),
            Row(claims: #"{"iss":"https://appleid.apple.com.evil"}"#, reason: "the token was not issued by"),
            Row(claims: #"{"iss":null}"#, reason: "the token has no iss"),
            Row(claims: #"{"exp":\#(now - 3600)}"#, reason: "the token expired"),
            Row(claims: #"{"exp":null}"#, reason: "the token has no exp"),
            Row(claims: #"{"iat":\#(now + 600)}"#, reason: "s in the future"),
            Row(claims: #"{"nbf":\#(now + 600)}"#, reason: "the token is not valid for another"),
            Row(claims: #"{"sub":""}"#, reason: "the token has no subject"),
            Row(claims: #"{"nonce":"someone-elses"}"#, fields: ["nonce": "expected"], reason: "the nonce does not match"),
            Row(fields: ["nonce": "expected"], reason: "the nonce is missing"),
            Row(claims: #"{"nonce":"bound-to-a-nonce"}"#, reason: "the token is bound to a nonce and the request sent none"),
            Row(claims: #"{"c_hash":"AAAAAAAAAAAAAAAAAAAAAA"}"#, fields: ["authorization_code": "c-some-code"],
                reason: "c_hash does not match the authorization code"),
            Row(fields: ["user": "000999.someone.else"], reason: "user is not the token's subject"),
            Row(key: "none", reason: "unsigned tokens (alg none) are never accepted"),
            Row(header: #"{"alg":"HS256"}"#, reason: "alg HS256 is not allowed here"),
            Row(header: #"{"alg":"ES256"}"#, reason: "alg ES256 is not allowed here"),
            Row(header: #"{"kid":"unknown-kid"}"#, reason: "the signing key is unknown: the set has no RS256 key with kid unknown-kid"),
            Row(header: #"{"kid":null}"#, reason: "the token names no kid"),
            // The other RSA key under the published key's kid.
            Row(header: #"{"kid":"\#(MockApple.signingKeyIDs[0])"}"#, key: "old", reason: "the signature does not verify"),
        ]
    }

    @Test("each altered token is refused for its own reason; the unaltered one signs in")
    func table() async throws {
        let bench = try await AppleBench.start()
        func send(_ token: String, _ fields: [String: String] = [:]) async throws -> HTTPClientResponse {
            try await bench.native(["key": bench.key, "secret": bench.secret, "identity_token": token].merging(fields) { $1 })
        }
        let valid = try await bench.apple.sign(claims: "{}", template: "id_token")
        let control = try await send(valid)
        #expect(control.status == 200, "the template token itself passes: \(String(decoding: control.body, as: UTF8.self))")

        for row in Self.rows(now: Int(Date().timeIntervalSince1970)) {
            let token = try await bench.apple.sign(claims: row.claims, header: row.header, key: row.key, template: "id_token")
            let answer = try await send(token, row.fields)
            Self.expectRefused(answer, row.reason, "\(row)")
        }

        // Tampering after signing: a payload byte, a signature byte, a non-canonical last character.
        let parts = valid.split(separator: ".").map(String.init)
        for index in [1, 2] {
            var characters = Array(parts[index])
            let middle = characters.count / 2
            characters[middle] = characters[middle] == "A" ? "B" : "A"
            var tampered = parts
            tampered[index] = String(characters)
            Self.expectRefused(try await send(tampered.joined(separator: ".")), "the signature does not verify", "part \(index)")
        }
        var signature = Array(parts[2])
        let last = try #require(signature.last)
        // The last character of a 256-byte signature carries 4 spare bits, which must be zero.
        let index = try #require(Array("AQgw").firstIndex(of: last), "a canonical last character is one of AQgw")
        signature[signature.count - 1] = Array("BRhx")[index]
        let noncanonical = try await send(parts[0] + "." + parts[1] + "." + String(signature))
        Self.expectRefused(noncanonical, "the signature is not canonical unpadded base64url", "non-canonical")
        try await bench.stop()
    }

    @Test("malformed requests: not JSON, no credentials, an oversized token")
    func requests() async throws {
        let bench = try await AppleBench.start()
        // A body that says JSON but is not one: told so, not asked for fields it may well hold.
        for broken in [#"{"key": "#, #"{"key":"a","key":"b"}"#, "[1]", "key=\(bench.key)"] {
            let answer = try await bench.gateway.client.execute(HTTPClientRequest(
                method: "POST", url: "http://127.0.0.1:\(bench.gateway.port)/auth/apple/native",
                headers: [HTTPHeader(name: "Content-Type", value: "application/json")], body: Array(broken.utf8)))
            #expect(answer.status == 400, "\(broken)")
            #expect(answer.json?["error_description"] == "the body is labelled JSON but is not a JSON object", "\(broken)")
        }
        let valid = try await bench.apple.sign(claims: "{}", template: "id_token")
        let missing = try await bench.native(["identity_token": valid])
        #expect(missing.status == 400)
        #expect(missing.json?["error_description"]?.stringValue?.hasPrefix("send key and secret") == true)
        var parts = valid.split(separator: ".").map(String.init)
        parts[1] = String(repeating: "A", count: 1 << 20)
        let huge = try await bench.native([
            "key": bench.key, "secret": bench.secret, "identity_token": parts.joined(separator: "."),
        ])
        #expect(huge.status == 413 || huge.status == 401)
        try await bench.stop()
    }

    /// Expects a 401 `invalid_token` whose description names `reason`.
    static func expectRefused(
        _ answer: HTTPClientResponse, _ reason: String, _ row: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let description = answer.json?["error_description"]?.stringValue ?? String(decoding: answer.body, as: UTF8.self)
        #expect(answer.status == 401, "\(row): \(description)", sourceLocation: sourceLocation)
        #expect(answer.json?["error"] == "invalid_token", "\(row)", sourceLocation: sourceLocation)
        #expect(
            description.hasPrefix("The identity token is not valid: ") && description.contains(reason), "\(row): \(description)",
            sourceLocation: sourceLocation)
    }
}
