import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// Providers that encrypt what they sign (itsme, Finnish Trust Network brokers): the app's
/// public keys are published at `/auth/:provider/jwks`, the provider encrypts id_tokens and
/// UserInfo answers to them, and Gatehouse opens them with the keyset's `encryption_key`.
@Suite("Encrypted id_tokens and UserInfo", .serialized)
struct EncryptedTokenTests {
    @Test("the app's JWKS publishes only public halves; the provider encrypts to it, and login and me open what it sends")
    func encrypted() async throws {
        let bench = try await LoginBench.start()
        let openssl = try OpenSSLTool()
        let encryptionKey = try openssl.makeRSAKey("enc.pem")
        let signingKey = try openssl.makeP256Key("sig.pem")
        func keyset(_ parameters: JSONObject) async throws {
            let body = JSONValue.object(["parameters": .object(parameters), "response_type": "both"]).jsonText
            let saved = try await bench.gateway.send("PUT", "/api/admin/apps/\(bench.key)/keysets/mockenc", body: body)
            #expect(saved.status == 200, "\(saved.body)")
        }
        let base: JSONObject = ["client_id": "client-1", "client_secret": "secret-1", "key_id": "app-sig-1"]
        try await keyset(base.merging(["encryption_key": .string(encryptionKey), "private_key": .string(signingKey)]) { $1 })

        let jwksURL = bench.base + "/auth/mockenc/jwks?k=\(bench.key)"
        let published = try await bench.get(jwksURL)
        #expect(published.status == 200 && published.header("content-type") == "application/jwk-set+json")
        let keys = try #require(published.json?["keys"]?.arrayValue)
        #expect(keys.count == 2 && keys[0]["use"] == "sig" && keys[0]["kid"] == "app-sig-1" && keys[0]["kty"] == "EC")
        #expect(keys[1]["use"] == "enc" && keys[1]["kty"] == "RSA" && keys[1]["kid"]?.stringValue?.count == 43)
        for key in keys { #expect(key["d"] == nil && key["p"] == nil && key["q"] == nil, "no private member is published") }
        let text = String(decoding: published.body, as: UTF8.self)
        #expect(!text.contains("PRIVATE") && !text.contains("secret-1"))
        let unknown = try await bench.get(bench.base + "/auth/mockenc/jwks?k=nope")
        #expect(unknown.status == 404 && unknown.json?["error"] == "not_found")
        let missing = try await bench.get(bench.base + "/auth/mockenc/jwks")
        #expect(missing.status == 400 && missing.json?["error"] == "invalid_request" && missing.json?["error_description"] != nil)
        #expect(try await bench.get(bench.base + "/auth/mock2/jwks?k=\(bench.key)").json?["keys"] == [], "a keyset without keys publishes none")
        #expect(try await bench.get(bench.base + "/auth/mockpar2/jwks?k=\(bench.key)").status == 404)

        func login(_ state: String) async throws -> JSONValue {
            try LoginBench.message(try await bench.login("mockenc", opts: #"{"state":"\#(state)","state_type":"client","scope":"openid"}"#))
        }
        try await bench.mock.encryptTo(jwksURL)
        let message = try await login("e")
        #expect(message["status"] == "success", "\(message)")
        #expect(message["data"]?["id_token"]?.stringValue?.split(separator: ".").count == 5, "the id_token arrived encrypted")
        let token = try #require(message["data"]?["access_token"]?.stringValue)
        let profile = try await bench.get(
            bench.base + "/auth/mockenc/me", headers: [HTTPHeader(name: "oauthio", value: "k=\(bench.key)&access_token=\(token)")])
        #expect(profile.status == 200 && profile.json?["data"]?["id"] == "12345", "\(String(decoding: profile.body, as: UTF8.self))")

        // A rotation: while the provider still encrypts to the key set it cached, the previous key
        // opens what it sends; without it nothing does; once it reads the set again, the new key.
        let rotatedKey = try openssl.makeRSAKey("other.pem")
        try await keyset(base.merging(["encryption_key": .string(rotatedKey), "previous_encryption_key": .string(encryptionKey)]) { $1 })
        let cached = try await login("c")
        #expect(cached["status"] == "success", "\(cached)")
        try await keyset(base.merging(["encryption_key": .string(rotatedKey)]) { $1 })
        let lost = try await login("l")
        #expect(lost["message"] == "The id_token is not valid: the token does not decrypt with the app's key", "\(lost)")
        try await bench.mock.encryptTo(jwksURL)
        let rotated = try await login("r")
        #expect(rotated["status"] == "success", "\(rotated)")
        // The provider stops encrypting: a plain token from a provider that encrypts is refused.
        try await bench.mock.encryptTo("")
        let plain = try await login("p")
        #expect(plain["message"] == "The id_token is not valid: the provider encrypts its tokens, and this one is not encrypted", "\(plain)")
        try await bench.stop()
    }
}
