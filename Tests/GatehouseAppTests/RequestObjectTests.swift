import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// RFC 9101 request objects: the authorize parameters travel as a JWT the app signed, and the
/// browser sees only the few the definition keeps in the clear.
@Suite("Signed request objects", .serialized)
struct RequestObjectTests {
    /// The claims of the `request` parameter in an authorize URL, unverified: the mock verifies.
    static func claims(in location: String) throws -> (names: [String], header: JSONValue, claims: JSONValue) {
        let query = try #require(location.split(separator: "?", maxSplits: 1).last.map(String.init))
        let fields = FormField.parse(query) ?? []
        let token = try #require(fields.first { $0.name == "request" }?.value)
        let parts = token.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        let header = try #require(Base64URL.decode(parts[0]).flatMap(JSONValue.parse))
        let claims = try #require(Base64URL.decode(parts[1]).flatMap(JSONValue.parse))
        return (fields.map(\.name), header, claims)
    }

    @Test("Duo's shape, HS512 with the secret: only client_id and response_type stay outside; the claims carry the rest, typed extras included")
    func maced() async throws {
        let bench = try await LoginBench.start()
        let opts = #"{"state":"j","state_type":"client","scope":"openid","authorize":{"login_hint":"ada"}}"#
        let start = try await bench.get(bench.startURL("mockjar", opts: opts))
        let location = try #require(start.header("location"), "\(String(decoding: start.body, as: UTF8.self))")
        let (names, header, claims) = try Self.claims(in: location)
        #expect(names == ["client_id", "response_type", "request"], "\(location)")
        #expect(header["alg"] == "HS512" && header["typ"] == "oauth-authz-req+jwt")
        #expect(claims["iss"] == "client-1" && claims["client_id"] == "client-1" && claims["aud"] == .string(bench.mock.baseURL))
        #expect(claims["redirect_uri"]?.stringValue?.hasPrefix(bench.base) == true && claims["state"] != nil && claims["nonce"] != nil)
        #expect(claims["scope"] == "openid" && claims["login_hint"] == "ada" && claims["tenant_hint"] == "client-1")
        #expect(claims["use_duo_code_attribute"] == false && claims["max_age"] == 600)
        guard case .number(let issued)? = claims["iat"], case .number(let expires)? = claims["exp"] else {
            Issue.record("iat and exp must be numbers: \(claims)")
            return
        }
        #expect(expires == issued + 300 && claims["jti"]?.stringValue?.isEmpty == false)
        #expect(!location.contains("secret-1"), "the secret only keys the MAC")

        // The mock takes the parameters from the verified object only, nonce included, and as Duo
        // does, checks an HS512 client assertion and MACs the id_token HS512 with the secret.
        try await bench.mock.setIDTokenAlgorithm("HS512")
        let message = try LoginBench.message(try await bench.login("mockjar", opts: opts))
        #expect(message["status"] == "success" && message["data"]?["id_token"] != nil, "\(message)")

        // Signed with a secret the provider does not know: the provider refuses the object.
        let wrong = #"{"parameters":{"client_id":"client-1","client_secret":"wrong"},"response_type":"both"}"#
        _ = try await bench.gateway.send("PUT", "/api/admin/apps/\(bench.key)/keysets/mockjar", body: wrong)
        let refused = try await bench.get(try #require(try await bench.get(bench.startURL("mockjar", opts: opts)).header("location")))
        #expect(refused.status == 400 && String(decoding: refused.body, as: UTF8.self).contains("signature does not verify"))
        try await bench.stop()
    }

    @Test("encrypted to the provider's published key: the browser sees a JWE the provider opens; without such a key the login stops")
    func encrypted() async throws {
        let bench = try await LoginBench.start()
        let opts = #"{"state":"e","state_type":"client","scope":"openid"}"#
        // Before the provider publishes an encryption key, the object cannot be sealed for it.
        let missing = try LoginBench.message(try await bench.get(bench.startURL("mockjarenc", opts: opts)))
        #expect(missing["message"] == "Error during the 'request_object' step (the provider's key set has no RSA encryption key for RSA-OAEP-256)",
            "\(missing)")

        // The cached set lacks an encryption key, which counts as a miss: the key the provider
        // then publishes is fetched at once.
        let fresh = bench
        try await fresh.mock.requireRequestEncryption("RSA-OAEP-256")
        let start = try await fresh.get(fresh.startURL("mockjarenc", opts: opts))
        let location = try #require(start.header("location"), "\(String(decoding: start.body, as: UTF8.self))")
        let query = try #require(location.split(separator: "?", maxSplits: 1).last.map(String.init))
        let fields = FormField.parse(query) ?? []
        let request = try #require(fields.first { $0.name == "request" }?.value)
        let parts = request.split(separator: ".").map(String.init)
        #expect(parts.count == 5, "a compact JWE, not the signed object itself")
        let header = try #require(Base64URL.decode(parts[0]).flatMap(JSONValue.parse))
        #expect(header == ["alg": "RSA-OAEP-256", "enc": "A128CBC-HS256", "kid": "mock-enc-1", "cty": "JWT"])
        #expect(!location.contains("redirect_uri=") && !location.contains("state="), "only the JWE carries them")
        let message = try LoginBench.message(try await fresh.login("mockjarenc", opts: opts))
        #expect(message["status"] == "success" && message["data"]?["id_token"] != nil, "\(message)")
        try await fresh.stop()
    }

    @Test("RS256 with the app's key, pushed: the object goes to the PAR endpoint and the browser carries a reference")
    func signedAndPushed() async throws {
        let bench = try await LoginBench.start()
        let openssl = try OpenSSLTool()
        try openssl.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "app.pem"])
        let modulus = try openssl.run(["rsa", "-in", "app.pem", "-noout", "-modulus"])
        try await bench.mock.setClientKey(modulusHex: String(modulus.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst("Modulus=".count)))
        func keyset(_ pem: String) async throws {
            let parameters = JSONValue.object(["client_id": "client-1", "client_secret": "secret-1", "private_key": .string(pem), "key_id": "k1"])
            let body = JSONValue.object(["parameters": parameters, "response_type": "both"]).jsonText
            _ = try await bench.gateway.send("PUT", "/api/admin/apps/\(bench.key)/keysets/mockjarpar", body: body)
        }
        try await keyset(try openssl.readText("app.pem"))
        let opts = #"{"state":"r","state_type":"client","scope":"openid"}"#
        let start = try await bench.get(bench.startURL("mockjarpar", opts: opts))
        let location = try #require(start.header("location"), "\(String(decoding: start.body, as: UTF8.self))")
        let query = try #require(location.split(separator: "?", maxSplits: 1).last.map(String.init))
        #expect((FormField.parse(query) ?? []).map(\.name) == ["client_id", "request_uri"], "\(location)")
        let message = try LoginBench.message(try await bench.login("mockjarpar", opts: opts))
        #expect(message["status"] == "success" && message["data"]?["id_token"] != nil, "\(message)")

        try await keyset("not a key")
        let broken = try LoginBench.message(try await bench.get(bench.startURL("mockjarpar", opts: opts)))
        #expect(broken["message"] == "Error during the 'request_object' step (the keyset's private_key is not an unencrypted PEM RSA or EC private key)")
        try await bench.stop()
    }
}
