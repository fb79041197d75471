import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// Providers whose API host the login names: taken from the token answer (`extra`) or from a
/// call made right after the exchange (`lookup`), and used only within the definition's `hosts`.
@Suite("API hosts the login names", .serialized)
struct LearnedHostTests {
    @Test("an API host the login names (Salesforce's instance_url): used only when the definition lists it")
    func learnedHost() async throws {
        let bench = try await LoginBench.start()
        let message = try await bench.clientLogin("mockhost", state: "h")
        let token = try #require(message["data"]?["access_token"]?.stringValue)
        #expect(message["data"]?["instance_url"]?.stringValue == bench.mock.baseURL, "the token answer's extra reaches the SDK")
        #expect(message["data"]?["request"]?["required"] == .array(["instance_url"]), "so the SDK sends it back")
        func call(_ path: String, instance: String?) async throws -> HTTPClientResponse {
            var header = "k=\(bench.key)&access_token=\(token)"
            if let instance { header += "&instance_url=" + PercentEncoding.encode(instance) }
            return try await bench.get(bench.base + path, headers: [HTTPHeader(name: "oauthio", value: header)])
        }
        let relative = try await call("/request/mockhost/%2Fuser", instance: bench.mock.baseURL)
        #expect(relative.status == 200, "\(String(decoding: relative.body, as: UTF8.self))")
        let absolute = try await call("/request/mockhost/" + PercentEncoding.encode(bench.mock.baseURL + "/oauth2/user"), instance: bench.mock.baseURL + "/")
        #expect(absolute.status == 200, "an absolute URL on the named host, and a trailing slash on the value")
        let me = try await call("/auth/mockhost/me", instance: bench.mock.baseURL)
        #expect(me.status == 200 && me.json?["data"]?["id"] == .number(12345), "\(String(decoding: me.body, as: UTF8.self))")

        let missing = try await call("/request/mockhost/%2Fuser", instance: nil)
        #expect(missing.status == 400 && missing.json?["message"]?.stringValue?.contains("instance_url") == true)
        let port = try #require(bench.mock.baseURL.split(separator: ":").last)
        let elsewhere = [
            "http://localhost:\(port)", "https://127.0.0.1:\(port)", "http://127.0.0.1:1", "http://127.0.0.1:\(port)@evil.example",
            "http://127.0.0.1:\(port)/a/../b", "http://127.0.0.1:\(port)?x=1", "127.0.0.1:\(port)", "http://evil.example#127.0.0.1:\(port)",
        ]
        for instance in elsewhere {
            let refused = try await call("/request/mockhost/%2Fuser", instance: instance)
            #expect(refused.status == 400, "\(instance)")
            #expect(refused.json?["message"]?.stringValue == "'instance_url' is not one of mockhost's API hosts", "\(instance)")
            let profile = try await call("/auth/mockhost/me", instance: instance)
            #expect(profile.status == 400, "\(instance)")
        }
        try await bench.stop()
    }

    @Test("a lookup after the code exchange adds the API host to the result (Mailchimp's metadata); a failing one fails the login unless optional")
    func lookup() async throws {
        let bench = try await LoginBench.start()
        let message = try await bench.clientLogin("mocklookup", state: "l")
        let token = try #require(message["data"]?["access_token"]?.stringValue, "\(message)")
        #expect(message["data"]?["api_endpoint"]?.stringValue == bench.mock.baseURL && message["data"]?["dc"] == "us1")
        #expect(message["data"]?["request"]?["required"] == .array(["api_endpoint"]))
        let header = "k=\(bench.key)&access_token=\(token)&api_endpoint=" + PercentEncoding.encode(bench.mock.baseURL)
        let user = try await bench.get(bench.base + "/request/mocklookup/%2Fuser", headers: [HTTPHeader(name: "oauthio", value: header)])
        #expect(user.status == 200, "\(String(decoding: user.body, as: UTF8.self))")

        // Server-side: the lookup's fields come back with the tokens from /auth/access_token.
        let tokens = try await bench.serverSideTokens("mocklookup", state: "s")
        #expect(tokens.json?["api_endpoint"]?.stringValue == bench.mock.baseURL, "\(String(decoding: tokens.body, as: UTF8.self))")

        let failed = try await bench.clientLogin("mocklookupbad", state: "f")
        #expect(failed["status"] == "error")
        #expect(failed["message"]?.stringValue?.hasPrefix("Error during the 'lookup' step") == true, "\(failed)")
        let tolerated = try await bench.clientLogin("mocklookupoptional", state: "o")
        #expect(tolerated["status"] == "success" && tolerated["data"]?["access_token"] != nil && tolerated["data"]?["api_endpoint"] == nil)
        try await bench.stop()
    }

    @Test("an API host nested in the token answer (Teamwork's installation.apiEndPoint) is exported to the result and used within hosts")
    func tokenExport() async throws {
        let bench = try await LoginBench.start()
        let message = try await bench.clientLogin("mockexport", state: "e")
        let token = try #require(message["data"]?["access_token"]?.stringValue, "\(message)")
        #expect(message["data"]?["api_endpoint"]?.stringValue == bench.mock.baseURL + "/" && message["data"]?["site"] == .number(7))
        #expect(message["data"]?["installation"] == nil, "only what the definition exports")
        #expect(message["data"]?["request"]?["required"] == .array(["api_endpoint"]))
        let header = "k=\(bench.key)&access_token=\(token)&api_endpoint=" + PercentEncoding.encode(bench.mock.baseURL + "/")
        let user = try await bench.get(bench.base + "/request/mockexport/%2Fuser", headers: [HTTPHeader(name: "oauthio", value: header)])
        #expect(user.status == 200, "\(String(decoding: user.body, as: UTF8.self))")
        let tokens = try await bench.serverSideTokens("mockexport", state: "s")
        #expect(tokens.json?["api_endpoint"]?.stringValue == bench.mock.baseURL + "/", "\(String(decoding: tokens.body, as: UTF8.self))")
        let extended = try await bench.get(bench.base + "/api/providers/mockexport?extend=true")
        #expect(extended.json?["data"]?["oauth2"]?["access_token"]?["export"] == ["api_endpoint", "site"])
        try await bench.stop()
    }

    @Test("a host built from two callback fields (ShareFile's subdomain and control plane): the whole host must be one of hosts")
    func splitHost() async throws {
        let bench = try await LoginBench.start()
        let message = try await bench.clientLogin("mocksplithost", state: "p")
        let token = try #require(message["data"]?["access_token"]?.stringValue, "\(message)")
        #expect(message["data"]?["subdomain"] == "127.0" && message["data"]?["apicp"] == "0.1")
        #expect(message["data"]?["request"]?["required"] == .array(["apicp", "subdomain"]))
        func call(_ apicp: String) async throws -> HTTPClientResponse {
            let header = "k=\(bench.key)&access_token=\(token)&subdomain=127.0&apicp=" + PercentEncoding.encode(apicp)
            return try await bench.get(bench.base + "/request/mocksplithost/%2Fuser", headers: [HTTPHeader(name: "oauthio", value: header)])
        }
        let user = try await call("0.1")
        #expect(user.status == 200, "\(String(decoding: user.body, as: UTF8.self))")
        for apicp in ["0.2", "0.1.evil.example", "0.1:1", "0.1/x", "0.1@evil.example"] {
            let refused = try await call(apicp)
            #expect(refused.status == 400, "\(apicp)")
            #expect(refused.json?["message"] == "'subdomain' and 'apicp' do not name one of mocksplithost's API hosts", "\(apicp)")
        }

        // A callback whose control plane was changed on the way: the code is never sent there.
        let start = try await bench.get(bench.startURL("mocksplithost", opts: #"{"state":"x","state_type":"client"}"#))
        let consent = try await bench.get(try #require(start.header("location")))
        let callback = try #require(consent.header("location"))
        let tampered = try LoginBench.message(try await bench.get(callback.replacingOccurrences(of: "apicp=0.1", with: "apicp=0.1.evil.example")))
        #expect(tampered["status"] == "error" && tampered["message"] == "'subdomain' and 'apicp' do not name one of mocksplithost's hosts", "\(tampered)")
        try await bench.stop()
    }

    @Test("a token endpoint on the host the callback names (pCloud, Kommo): used within hosts; refresh takes it from the request")
    func callbackHost() async throws {
        let bench = try await LoginBench.start()
        let host = try #require(bench.mock.baseURL.split(separator: "/").last.map(String.init))
        let tokens = try await bench.serverSideTokens("mockcbhost", state: "t")
        let refreshToken = try #require(tokens.json?["refresh_token"]?.stringValue, "\(String(decoding: tokens.body, as: UTF8.self))")
        #expect(tokens.json?["hostname"]?.stringValue == host, "the host goes to the backend, for refresh")

        func refresh(_ hostname: String?) async throws -> HTTPClientResponse {
            var form = ["token": refreshToken, "key": bench.key, "secret": bench.secret]
            form["hostname"] = hostname
            return try await bench.post("/auth/refresh_token/mockcbhost", form: form)
        }
        let missing = try await refresh(nil)
        #expect(missing.status == 400 && missing.json?["message"] == "The request has no 'hostname', which names mockcbhost's host")
        let elsewhere = try await refresh("localhost:" + (host.split(separator: ":").last.map(String.init) ?? ""))
        #expect(elsewhere.status == 400 && elsewhere.json?["message"] == "'hostname' is not one of mockcbhost's hosts")
        let renewed = try await refresh(host)
        #expect(renewed.status == 200 && renewed.json?["access_token"] != nil, "\(String(decoding: renewed.body, as: UTF8.self))")
        let revokeForm = ["token": try #require(renewed.json?["access_token"]?.stringValue), "key": bench.key, "secret": bench.secret]
        let unnamed = try await bench.post("/auth/revoke/mockcbhost", form: revokeForm)
        #expect(unnamed.status == 400 && unnamed.json?["error_description"] == "The request has no 'hostname', which names mockcbhost's host")
        var named = revokeForm
        named["hostname"] = host
        let revoked = try await bench.post("/auth/revoke/mockcbhost", form: named)
        #expect(revoked.status == 200 && revoked.json?["revoked"] == true, "\(String(decoding: revoked.body, as: UTF8.self))")
        // The extended view shows where each token endpoint may go, as it does for request.
        let extended = try await bench.get(bench.base + "/api/providers/mockcbhost?extend=true")
        for name in ["access_token", "refresh", "revoke"] {
            #expect(extended.json?["data"]?["oauth2"]?[name]?["hosts"] == [.string(bench.mock.baseURL)], "\(name)")
        }

        // A callback whose host was changed on the way: the code is never sent there.
        let start = try await bench.get(bench.startURL("mockcbhost", opts: #"{"state":"x","state_type":"client"}"#))
        let consent = try await bench.get(try #require(start.header("location")))
        let callback = try #require(consent.header("location"))
        #expect(callback.contains("hostname=127.0.0.1"))
        let tampered = try LoginBench.message(try await bench.get(callback.replacingOccurrences(of: "hostname=127.0.0.1", with: "hostname=localhost")))
        #expect(tampered["status"] == "error" && tampered["message"] == "'hostname' is not one of mockcbhost's hosts", "\(tampered)")
        try await bench.stop()
    }
}
