import GatehouseCore
import HTTPClient
import ProviderEngine
import Testing
@testable import GatehouseApp

@Suite("Token answers")
struct TokenResponseTests {
    private func answer(_ json: String) -> HTTPClientResponse {
        HTTPClientResponse(status: 200, headers: [HTTPHeader(name: "Content-Type", value: "application/json")], body: Array(json.utf8))
    }

    @Test("a wrapped answer is read at its path, an unwrapped error as it is, and the provider's names become OAuth's")
    func wrappedAndRenamed() throws {
        let endpoint = Endpoint(
            url: "https://x/t", method: "POST", answer: ProfilePath("data"),
            names: ["access_token": "accessToken", "expires_in": "expireIn", "refresh_token": "refreshToken"])
        let fields = try #require(TokenResponse.fields(
            of: answer(#"{"data":{"accessToken":"a","refreshToken":"r","expireIn":7200,"corpId":"c"},"message":"ok"}"#), endpoint: endpoint))
        #expect(fields["access_token"] == "a" && fields["refresh_token"] == "r" && fields["expires_in"] == 7200)
        #expect(fields["corpId"] == "c", "the provider's own fields stay, for extra")
        let error = try #require(TokenResponse.fields(of: answer(#"{"error":"invalid_grant"}"#), endpoint: endpoint))
        #expect(error["error"] == "invalid_grant")
        #expect(TokenResponse.fields(of: answer(#"{"accessToken":"top"}"#), endpoint: endpoint)?["access_token"] == "top")
    }
}
