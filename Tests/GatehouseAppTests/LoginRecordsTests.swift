import GatehouseCore
import Testing
@testable import GatehouseApp

@Suite("Login records")
struct LoginRecordsTests {
    private func state(optionals present: Bool) -> LoginState {
        LoginState(
            appKey: "app-key-0123456789abcdefgh", provider: "benchmock", version: "oauth2", origin: "https://app.example",
            redirectURI: present ? "https://app.example/done?x=\u{E9}" : nil, redirectType: present ? "server" : nil, mobile: present,
            clientState: present ? "s1" : nil, clientMode: !present, responseType: present ? .code : .token,
            codeVerifier: present ? "verifier" : nil, nonce: present ? "n-\u{2603}" : nil, requestTokenSecret: present ? "rts" : nil,
            scopeOverride: present ? "a b" : nil, createdAt: 1_796_037_151)
    }

    private func same(_ a: LoginState, _ b: LoginState) -> Bool {
        a.appKey == b.appKey && a.provider == b.provider && a.version == b.version && a.origin == b.origin && a.redirectURI == b.redirectURI
            && a.redirectType == b.redirectType && a.mobile == b.mobile && a.clientState == b.clientState && a.clientMode == b.clientMode
            && a.responseType == b.responseType && a.codeVerifier == b.codeVerifier && a.nonce == b.nonce
            && a.requestTokenSecret == b.requestTokenSecret && a.scopeOverride == b.scopeOverride && a.createdAt == b.createdAt
    }

    @Test("a state record reads back whole, with every optional field present or absent; a damaged one is refused")
    func stateRoundTrip() throws {
        for present in [false, true] {
            let original = state(optionals: present)
            let record = original.record
            #expect(same(try #require(LoginState(record: record)), original))
            for length in 0..<record.count { #expect(LoginState(record: Array(record.prefix(length))) == nil, "cut at \(length)") }
            #expect(LoginState(record: record + [0]) == nil)
        }
    }

    @Test("a state record in the JSON form of earlier versions still reads")
    func legacyState() throws {
        let json = #"{"client_mode":false,"code_verifier":"verifier","created_at":1796037151,"key":"app-key-0123456789abcdefgh","#
            + #""mobile":true,"nonce":"n-\u2603","origin":"https://app.example","provider":"benchmock","redirect_type":"server","#
            + #""redirect_uri":"https://app.example/done?x=\u00e9","request_token_secret":"rts","response_type":"code","scope":"a b","#
            + #""state":"s1","version":"oauth2"}"#
        #expect(same(try #require(LoginState(record: Array(json.utf8))), state(optionals: true)))
        #expect(LoginState(record: Array(#"{"key":"k"}"#.utf8)) == nil)
    }

    @Test("a code record keeps the exact answer of /auth/access_token; the JSON form of earlier versions gives the same answer")
    func codeAnswer() throws {
        let result: [String: JSONValue] = ["access_token": "at", "refresh_token": "rt", "expires_in": 3600]
        let code = LoginCode(appKey: "app-key-0123456789abcdefgh", provider: "benchmock", clientState: "s1", result: result)
        let read = try #require(LoginCode(record: code.record))
        #expect(read.appKey == "app-key-0123456789abcdefgh")
        let expected: JSONValue = ["access_token": "at", "refresh_token": "rt", "expires_in": 3600, "state": "s1", "provider": "benchmock"]
        #expect(JSONValue.parse(read.answer) == expected)
        let stateless = try #require(LoginCode(record: LoginCode(appKey: "k", provider: "p", clientState: nil, result: [:]).record))
        #expect(JSONValue.parse(stateless.answer) == ["state": nil, "provider": "p"])
        let legacy = #"{"key":"app-key-0123456789abcdefgh","provider":"benchmock","result":{"access_token":"at","expires_in":3600,"#
            + #""refresh_token":"rt"},"state":"s1"}"#
        #expect(try #require(LoginCode(record: Array(legacy.utf8))).answer == read.answer)
        for length in 0..<9 { #expect(LoginCode(record: Array(code.record.prefix(length))) == nil, "cut at \(length)") }
    }
}
