import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// A profile step whose answer is a signed JWT (OpenID Connect Core §5.3.2, FranceConnect):
/// `me` maps its claims only once the signature, issuer and audience check out.
@Suite("Signed UserInfo answers", .serialized)
struct SignedProfileTests {
    @Test("me reads the claims of a signed UserInfo answer, and refuses one altered after signing")
    func signedUserInfo() async throws {
        let bench = try await LoginBench.start()
        let message = try await bench.clientLogin("mocksignedinfo", state: "s")
        let token = try #require(message["data"]?["access_token"]?.stringValue, "\(message)")
        func me(_ extra: String = "") async throws -> HTTPClientResponse {
            try await bench.get(bench.base + "/auth/mocksignedinfo/me", headers: [HTTPHeader(name: "oauthio", value: "k=\(bench.key)&access_token=\(token)" + extra)])
        }
        let profile = try await me()
        #expect(profile.status == 200, "\(String(decoding: profile.body, as: UTF8.self))")
        let data = profile.json?["data"]
        #expect(data?["id"] == "12345" && data?["firstname"] == "Octo" && data?["lastname"] == "One", "\(String(decoding: profile.body, as: UTF8.self))")
        #expect(data?["email_verified"] == false && data?["raw"]?["iss"]?.stringValue == bench.mock.baseURL)
        let altered = try await me("&tamper=1")
        #expect(altered.status == 502, "\(String(decoding: altered.body, as: UTF8.self))")
        #expect(altered.json?["message"] == "The provider's signed profile was refused: the signature does not verify")
        try await bench.stop()
    }
}
