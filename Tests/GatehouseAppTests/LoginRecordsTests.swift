import GatehouseCore
import HTTPServer
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
        let result: JSONObject = ["access_token": "at", "refresh_token": "rt", "expires_in": 3600]
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

@Suite("Request fields")
struct RequestFieldsTests {
    private func request(_ method: String, query: String, body: String = "", type: String = "application/x-www-form-urlencoded") -> RequestFields {
        RequestFields(HTTPRequest(
            method: method, rawPath: "/auth/access_token", query: FormField.parse(query) ?? [],
            headers: HTTPHeaders([("Content-Type", type)]), body: Array(body.utf8), requestID: "t"))
    }

    @Test("a JSON member wins over the form's last field of a name, which wins over the query's first; empty is absent")
    func precedence() {
        let query = request("GET", query: "code=q1&code=q2&key=k&empty=&state=s")
        #expect(query["code"] == "q1" && query["key"] == "k" && query["state"] == "s")
        #expect(query["empty"] == nil && query["missing"] == nil)
        let form = request("POST", query: "code=q1&key=k", body: "code=f1&code=f2&secret=x&key=")
        #expect(form["code"] == "f2" && form["secret"] == "x")
        #expect(form["key"] == nil, "an empty form field hides the query's")
        let json = request("POST", query: "code=q1&state=s", body: #"{"code":"j","key":7}"#, type: "application/json")
        #expect(json["code"] == "j" && json["state"] == "s")
        #expect(json["key"] == nil, "a member that is not a string is ignored")
        let getWithBody = request("GET", query: "code=q1", body: "code=f1")
        #expect(getWithBody["code"] == "q1", "only a POST body counts")
    }
}
