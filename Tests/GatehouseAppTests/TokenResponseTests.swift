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

    @Test("a declared prefix before the JSON is dropped (Xiaomi's, as its documentation shows it); a numeric error code is kept")
    func prefixed() throws {
        let endpoint = Endpoint(url: "https://x/t", format: "json", prefix: "&&&START&&&")
        let success = "&&&START&&&{\n\"access_token\": \"access token value\",\n\"expires_in\": 259200,\n\"refresh_token\": \"r\",\n\"token_type \": \"mac\",\n\"openId\":\"2.0XXXXXXXXX\"\n}"
        let fields = try #require(TokenResponse.fields(of: answer(success), endpoint: endpoint))
        #expect(fields["access_token"] == "access token value" && fields["openId"] == "2.0XXXXXXXXX")
        #expect(TokenResponse.fields(of: answer("\r\n &&&START&&& {\"access_token\":\"a\"}"), endpoint: endpoint)?["access_token"] == "a")
        #expect(TokenResponse.fields(of: answer(#"{"access_token":"plain"}"#), endpoint: endpoint)?["access_token"] == "plain", "no prefix: read as it is")
        #expect(TokenResponse.fields(of: answer("&&&START&&&"), endpoint: endpoint) == nil)
        let error = TokenResponse.fields(of: answer(#"&&&START&&&{"error": 96008, "error_description": "code expired"}"#), endpoint: endpoint)
        #expect(TokenResponse.errorData(error) == .object(["error": 96008, "error_description": "code expired"]))
    }
}
