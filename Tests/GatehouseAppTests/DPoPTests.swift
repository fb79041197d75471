import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// RFC 9449: the provider binds its tokens to the keyset's `dpop_key`, and every token and API
/// call carries a fresh proof from that key; the mock provider checks each one.
@Suite("DPoP-bound tokens", .serialized)
struct DPoPTests {
    @Test("code exchange and refresh carry proofs (with the nonce the provider demands); API calls add the token's hash; the bare token is refused")
    func dpop() async throws {
        let bench = try await LoginBench.start()
        let openssl = try OpenSSLTool()
        try openssl.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "dpop.pem"])
        let parameters = JSONValue.object(["client_id": "client-1", "client_secret": "secret-1", "dpop_key": .string(try openssl.readText("dpop.pem"))])
        let saved = try await bench.gateway.send(
            "PUT", "/api/admin/apps/\(bench.key)/keysets/mockdpop", body: JSONValue.object(["parameters": parameters, "response_type": "both"]).jsonText)
        #expect(saved.status == 200)
        try await bench.mock.setDPoPNonce("n-0S6")

        let tokens = try await bench.serverSideTokens("mockdpop", state: "d")
        #expect(tokens.json?["token_type"] == "DPoP", "\(String(decoding: tokens.body, as: UTF8.self))")
        let accessToken = try #require(tokens.json?["access_token"]?.stringValue)
        let header = HTTPHeader(name: "oauthio", value: "k=\(bench.key)&access_token=\(accessToken)")
        let user = try await bench.get(bench.base + "/request/mockdpop/%2Fuser", headers: [header])
        #expect(user.status == 200, "\(String(decoding: user.body, as: UTF8.self))")
        // Without a proof from the key, the token is worthless: as a bearer token or under DPoP.
        for scheme in ["Bearer", "DPoP"] {
            let bare = try await bench.get(bench.mock.baseURL + "/oauth2/user", headers: [HTTPHeader(name: "Authorization", value: "\(scheme) \(accessToken)")])
            #expect(bare.status == 401, "\(scheme)")
        }
        let refreshToken = try #require(tokens.json?["refresh_token"]?.stringValue)
        let refreshed = try await bench.post("/auth/refresh_token/mockdpop", form: ["token": refreshToken, "key": bench.key, "secret": bench.secret])
        #expect(refreshed.status == 200 && refreshed.json?["token_type"] == "DPoP", "\(String(decoding: refreshed.body, as: UTF8.self))")
        try await bench.stop()
    }
}
