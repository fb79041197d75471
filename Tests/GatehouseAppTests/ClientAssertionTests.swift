import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// `private_key_jwt`: the app signs an assertion with its own key at every token endpoint call,
/// and no client secret is sent. The mock provider checks each one as RFC 7523 says.
@Suite("private_key_jwt client authentication", .serialized)
struct ClientAssertionTests {
    @Test("code exchange, refresh and revoke each carry a fresh RS256 assertion and no secret; a key the provider does not know fails")
    func privateKeyJWT() async throws {
        let bench = try await LoginBench.start()
        let openssl = try OpenSSLTool()
        func keyset(_ pem: String) async throws {
            let parameters = JSONValue.object(["client_id": "client-1", "private_key": .string(pem), "key_id": "k1"])
            let body = JSONValue.object(["parameters": parameters, "response_type": "both"]).jsonText
            let saved = try await bench.gateway.send("PUT", "/api/admin/apps/\(bench.key)/keysets/mockjwt", body: body)
            #expect(saved.status == 200, "\(saved.body)")
        }
        for name in ["registered", "other"] {
            try openssl.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "\(name).pem"])
        }
        let modulus = try openssl.run(["rsa", "-in", "registered.pem", "-noout", "-modulus"])
        try await bench.mock.setClientKey(modulusHex: String(modulus.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst("Modulus=".count)))
        try await keyset(try openssl.readText("registered.pem"))

        let tokens = try await bench.serverSideTokens("mockjwt", state: "j")
        let refreshToken = try #require(tokens.json?["refresh_token"]?.stringValue, "\(String(decoding: tokens.body, as: UTF8.self))")
        // The provider refuses a reused jti, so a second call passing shows the assertion is fresh.
        let refreshed = try await bench.post("/auth/refresh_token/mockjwt", form: ["token": refreshToken, "key": bench.key, "secret": bench.secret])
        #expect(refreshed.status == 200, "\(String(decoding: refreshed.body, as: UTF8.self))")
        let accessToken = try #require(refreshed.json?["access_token"]?.stringValue)
        let revoked = try await bench.post("/auth/revoke/mockjwt", form: ["token": accessToken, "key": bench.key, "secret": bench.secret])
        #expect(revoked.status == 200 && revoked.json?["revoked"] == true, "\(String(decoding: revoked.body, as: UTF8.self))")

        try await keyset(try openssl.readText("other.pem"))
        let refused = try await bench.clientLogin("mockjwt", state: "o")
        #expect(refused["status"] == "error", "\(refused)")
        #expect(refused["message"]?.stringValue?.contains("signature does not verify") == true, "\(refused)")
        try await keyset("not a key")
        let broken = try await bench.clientLogin("mockjwt", state: "b")
        #expect(broken["message"] == "Error during the 'access_token' step (the keyset's private_key is not an unencrypted PEM RSA or EC private key)")
        #expect(!(broken["message"]?.stringValue?.contains("not a key") ?? true), "the key material is never echoed")
        try await bench.stop()
    }

    @Test("client_secret_jwt: the assertion is an HS256 MAC keyed by the secret, which is never sent; a wrong secret fails")
    func clientSecretJWT() async throws {
        let bench = try await LoginBench.start()
        let tokens = try await bench.serverSideTokens("mockjwtsecret", state: "h")
        let refreshToken = try #require(tokens.json?["refresh_token"]?.stringValue, "\(String(decoding: tokens.body, as: UTF8.self))")
        let refreshed = try await bench.post("/auth/refresh_token/mockjwtsecret", form: ["token": refreshToken, "key": bench.key, "secret": bench.secret])
        #expect(refreshed.status == 200, "\(String(decoding: refreshed.body, as: UTF8.self))")
        let body = #"{"parameters":{"client_id":"client-1","client_secret":"not-the-secret"},"response_type":"both"}"#
        _ = try await bench.gateway.send("PUT", "/api/admin/apps/\(bench.key)/keysets/mockjwtsecret", body: body)
        let refused = try await bench.clientLogin("mockjwtsecret", state: "w")
        #expect(refused["status"] == "error" && refused["message"]?.stringValue?.contains("signature does not verify") == true, "\(refused)")
        try await bench.stop()
    }
}
