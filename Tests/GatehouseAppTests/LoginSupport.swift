import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient

/// A gateway wired to a local mock provider, with one app whose keysets point at it: what
/// every login test starts from.
struct LoginBench {
    let gateway: Gateway
    let mock: MockProvider
    let key: String
    let secret: String

    static let origin = "http://localhost"

    /// Provider definitions aimed at the mock, one per flow variant.
    static func providers(mock: String) -> [String: String] {
        let port = mock.split(separator: ":").last.map(String.init) ?? ""
        return [
            "mock2": """
                {"name": "Mock OAuth 2", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token", "refresh": "/oauth2/token",
                            "request": "\(mock)/oauth2",
                            "parameters": {"client_id": "string", "client_secret": "string", "scope": {"values": {"openid": "", "user": "", "deny": ""}}}}}
                """,
            "mockprofile": """
                {"name": "Mock OAuth 2 with a profile", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token", "refresh": "/oauth2/token",
                            "request": "\(mock)/oauth2", "parameters": {"client_id": "string", "client_secret": "string"}},
                 "profile": {"url": "/user", "fields": {"id": "id", "name": "name"}}}
                """,
            "mockpkce": """
                {"name": "Mock PKCE + OpenID", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token", "pkce": true,
                            "parameters": {"client_id": "string", "client_secret": "string", "scope": {"values": {"openid": ""}}}},
                 "openid": {"issuer": "\(mock)", "jwks_uri": "\(mock)/oauth2/jwks"}}
                """,
            "mocktenant": """
                {"name": "Mock OpenID hosted per tenant", "url": "http://{domain}",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token",
                            "parameters": {"domain": "string", "client_id": "string", "client_secret": "string",
                                           "issuer": {"default": "http://{domain}"}, "scope": {"values": {"openid": ""}}}},
                 "openid": {"issuer": "{issuer}", "jwks_uri": "http://{domain}/oauth2/jwks"}}
                """,
            "mockhs": """
                {"name": "Mock OpenID MACing id_tokens with the client secret", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token",
                            "parameters": {"client_id": "string", "client_secret": "string", "scope": {"values": {"openid": ""}}}},
                 "openid": {"issuer": "\(mock)", "algorithms": ["HS256"]}}
                """,
            "mockpkceplain": """
                {"name": "Mock PKCE plain", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token", "pkce": "plain",
                            "parameters": {"client_id": "string", "client_secret": "string"}}}
                """,
            "mockbadiss": """
                {"name": "Mock OpenID, wrong issuer", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token",
                            "parameters": {"client_id": "string", "client_secret": "string", "scope": {"values": {"openid": ""}}}},
                 "openid": {"issuer": "https://issuer.invalid", "jwks_uri": "\(mock)/oauth2/jwks"}}
                """,
            "mockbasic": """
                {"name": "Mock Basic auth", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token", "client_authentication": "basic"}}
                """,
            "mockpost": """
                {"name": "Mock form_post", "url": "\(mock)",
                 "oauth2": {"authorize": {"url": "/oauth2/authorize", "query": {"client_id": "{client_id}", "response_type": "code",
                            "redirect_uri": "{{callback}}", "state": "{{state}}", "response_mode": "form_post"}},
                            "access_token": "/oauth2/token"}}
                """,
            "mockjson": """
                {"name": "Mock JSON token endpoint", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize",
                            "access_token": {"url": "/oauth2/token", "body": "json", "answer": "data", "format": "json"},
                            "refresh": {"url": "/oauth2/token", "body": "json", "answer": "data"},
                            "request": "\(mock)/oauth2"},
                 "profile": {"fetch": [{"url": "/graphql", "method": "POST", "body": "json", "query": {"query": "{ me { id name email } }"}}],
                             "fields": {"id": "data.me.id", "name": "data.me.name", "email": "data.me.email"}}}
                """,
            "mockprefixed": """
                {"name": "Mock token answers after a prefix", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize",
                            "access_token": {"url": "/oauth2/token", "method": "GET", "prefix": "&&&START&&&", "format": "json"},
                            "refresh": {"url": "/oauth2/token", "method": "GET", "prefix": "&&&START&&&", "format": "json"}}}
                """,
            "mockhost": """
                {"name": "Mock API on a host the login names", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": {"url": "/oauth2/token", "extra": ["instance_url"]},
                            "request": {"url": "{{instance_url}}/oauth2", "hosts": ["\(mock)"]}},
                 "profile": {"url": "/user", "fields": {"id": "id", "name": "name"}}}
                """,
            "mockexport": """
                {"name": "Mock API host nested in the token answer", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize",
                            "access_token": {"url": "/oauth2/token", "export": {"api_endpoint": "installation.apiEndPoint", "site": "installation.id"}},
                            "request": {"url": "{{api_endpoint}}/oauth2", "hosts": ["\(mock)"]}}}
                """,
            "mocklookup": """
                {"name": "Mock lookup after the exchange", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token",
                            "lookup": {"url": "/oauth2/metadata", "headers": {"Authorization": "OAuth {{token}}"},
                                       "export": {"api_endpoint": "api_endpoint", "dc": "dc"}},
                            "request": {"url": "{{api_endpoint}}/oauth2", "hosts": ["\(mock)"]}}}
                """,
            "mocklookupbad": """
                {"name": "Mock lookup the provider refuses", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token",
                            "lookup": {"url": "/oauth2/metadata", "export": {"api_endpoint": "api_endpoint"}}}}
                """,
            "mocklookupoptional": """
                {"name": "Mock optional lookup the provider refuses", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token",
                            "lookup": {"url": "/oauth2/metadata", "export": {"api_endpoint": "api_endpoint"}, "optional": true}}}
                """,
            "mockcbhost": """
                {"name": "Mock token endpoint on the host the callback names", "url": "\(mock)",
                 "oauth2": {"authorize": {"url": "/oauth2/authorize", "extra": ["hostname"]},
                            "access_token": {"url": "http://{{hostname}}/oauth2/token", "hosts": ["\(mock)"]},
                            "refresh": {"url": "http://{{hostname}}/oauth2/token", "hosts": ["\(mock)"]},
                            "revoke": {"url": "http://{{hostname}}/oauth2/revoke", "hosts": ["\(mock)"],
                                       "query": {"token": "{{token}}", "client_id": "{client_id}", "client_secret": "{client_secret}"}}}}
                """,
            "mocksplithost": """
                {"name": "Mock token and API hosts built from two callback fields", "url": "\(mock)",
                 "oauth2": {"authorize": {"url": "/oauth2/authorize", "extra": ["subdomain", "apicp"]},
                            "access_token": {"url": "http://{{subdomain}}.{{apicp}}:\(port)/oauth2/token", "hosts": ["\(mock)"]},
                            "request": {"url": "http://{{subdomain}}.{{apicp}}:\(port)/oauth2", "hosts": ["\(mock)"]}}}
                """,
            "mock1": """
                {"name": "Mock OAuth 1", "url": "\(mock)",
                 "oauth1": {"request_token": "/oauth1/request_token", "authorize": "/oauth1/authorize",
                            "access_token": {"url": "/oauth1/access_token", "extra": ["screen_name"]}, "request": "\(mock)/oauth1"}}
                """,
            "mocksignedinfo": """
                {"name": "Mock signed UserInfo", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token", "request": "\(mock)/oauth2",
                            "parameters": {"client_id": "string", "client_secret": "string", "scope": {"values": {"openid": ""}}}},
                 "openid": {"issuer": "\(mock)", "jwks_uri": "\(mock)/oauth2/jwks"},
                 "profile": {"fetch": [{"url": "/userinfo.jwt", "format": "jwt", "query": {"tamper": "{{tamper}}"}}],
                             "fields": {"id": "sub", "firstname": "given_name", "lastname": "family_name", "email": "email"}}}
                """,
            "mockjwt": """
                {"name": "Mock private_key_jwt", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token", "refresh": "/oauth2/token",
                            "revoke": "/oauth2/revoke", "client_authentication": "private_key_jwt",
                            "parameters": {"client_id": "string", "private_key": "string", "key_id": "string"}}}
                """,
            "mockpar": """
                {"name": "Mock pushed authorization requests", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token", "par": "/oauth2/par", "pkce": true,
                            "parameters": {"client_id": "string", "client_secret": "string", "scope": {"values": {"user": "", "deny": ""}}}}}
                """,
            "mockjar": """
                {"name": "Mock shaped as Duo: request object, client assertion and id_token all HS512 with the secret", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token",
                            "client_authentication": "client_secret_jwt", "client_assertion": {"algorithm": "HS512"},
                            "request_object": {"algorithm": "HS512", "query": ["client_id", "response_type"],
                                               "claims": {"use_duo_code_attribute": false, "max_age": 600, "tenant_hint": "{client_id}"}},
                            "parameters": {"client_id": "string", "client_secret": "string", "scope": {"values": {"openid": "", "user": ""}}}},
                 "openid": {"issuer": "\(mock)", "algorithms": ["HS512"]}}
                """,
            "mockjarenc": """
                {"name": "Mock taking its request objects only encrypted to its published key", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token",
                            "request_object": {"algorithm": "HS256", "encryption": {"alg": "RSA-OAEP-256", "enc": "A128CBC-HS256"}},
                            "parameters": {"client_id": "string", "client_secret": "string", "scope": {"values": {"openid": ""}}}},
                 "openid": {"issuer": "\(mock)", "jwks_uri": "\(mock)/oauth2/jwks"}}
                """,
            "mockjarpar": """
                {"name": "Mock signed request objects, pushed", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token", "par": "/oauth2/par", "pkce": true,
                            "request_object": true,
                            "parameters": {"client_id": "string", "client_secret": "string", "private_key": "string", "key_id": "string",
                                           "scope": {"values": {"openid": ""}}}},
                 "openid": {"issuer": "\(mock)", "jwks_uri": "\(mock)/oauth2/jwks"}}
                """,
            "mockdpop": """
                {"name": "Mock DPoP-bound tokens", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token", "refresh": "/oauth2/token",
                            "request": "\(mock)/oauth2", "dpop": true,
                            "parameters": {"client_id": "string", "client_secret": "string", "dpop_key": "string"}}}
                """,
            "mockenc": """
                {"name": "Mock encrypting its id_tokens and UserInfo to the app", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token", "request": "\(mock)/oauth2",
                            "parameters": {"client_id": "string", "client_secret": "string", "encryption_key": "string",
                                           "previous_encryption_key": "string", "private_key": "string", "key_id": "string",
                                           "scope": {"values": {"openid": ""}}}},
                 "openid": {"issuer": "\(mock)", "jwks_uri": "\(mock)/oauth2/jwks", "encrypted": true},
                 "profile": {"fetch": [{"url": "/userinfo.jwt", "format": "jwt"}],
                             "fields": {"id": "sub", "firstname": "given_name", "lastname": "family_name", "email": "email"}}}
                """,
            "mockjwtsecret": """
                {"name": "Mock client_secret_jwt", "url": "\(mock)",
                 "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token", "refresh": "/oauth2/token",
                            "client_authentication": "client_secret_jwt"}}
                """,
            "mock1key": """
                {"name": "Mock OAuth 1 whose API takes the token secret as a key", "url": "\(mock)",
                 "oauth1": {"request_token": "/oauth1/request_token", "authorize": "/oauth1/authorize", "access_token": "/oauth1/access_token",
                            "request": {"url": "\(mock)/oauth1", "headers": {"Api-Key": "{{token_secret}}"}}, "sign_requests": false},
                 "profile": {"url": "/keyed", "fields": {"id": {"string": "id"}, "alias": "screen_name", "name": "name"}}}
                """,
        ]
    }

    static func start(
        store: String = "memory:", extra: [String] = [], responseType: String = "both", publicURL: String? = nil
    ) async throws -> LoginBench {
        let mock = try await MockProvider.start()
        let workspace = try Workspace(providers: providers(mock: mock.baseURL))
        let gateway = try await Gateway.start(workspace: workspace, store: store, extra: extra, publicURL: publicURL)
        let created = try await gateway.send("POST", "/api/admin/apps", body: #"{"name":"shop","domains":["localhost","app.example.com"]}"#)
        guard let key = created.json?["key"]?.stringValue, let secret = created.json?["secret"]?.stringValue else {
            throw RawHTTPError("app creation failed: \(created.status)")
        }
        for provider in ["mock2", "mockprofile", "mockpkce", "mockpkceplain", "mockbasic", "mockpost", "mockbadiss", "mockjson", "mockhost", "mockprefixed", "mockexport", "mocklookup", "mocklookupbad", "mocklookupoptional", "mockcbhost", "mocksplithost", "mocksignedinfo", "mockjwtsecret", "mockpar", "mockhs", "mockjar", "mockjarenc"] {
            let body = #"{"parameters":{"client_id":"client-1","client_secret":"secret-1","scope":["user"]},"response_type":"\#(responseType)"}"#
            _ = try await gateway.send("PUT", "/api/admin/apps/\(key)/keysets/\(provider)", body: body)
        }
        let tenant = #"{"parameters":{"domain":"127.0.0.1:\#(mock.port)","client_id":"client-1","client_secret":"secret-1"}}"#
        _ = try await gateway.send("PUT", "/api/admin/apps/\(key)/keysets/mocktenant", body: tenant)
        for provider in ["mock1", "mock1key"] {
            _ = try await gateway.send("PUT", "/api/admin/apps/\(key)/keysets/\(provider)", body: #"{"parameters":{"client_id":"ck-1","client_secret":"cs-1"}}"#)
        }
        return LoginBench(gateway: gateway, mock: mock, key: key, secret: secret)
    }

    func stop() async throws {
        _ = try await gateway.stop()
        mock.stop()
    }

    var base: String { "http://127.0.0.1:\(gateway.port)" }

    /// `GET` without following redirects, with optional headers.
    func get(_ url: String, headers: [HTTPHeader] = []) async throws -> HTTPClientResponse {
        try await gateway.client.execute(HTTPClientRequest(method: "GET", url: url, headers: headers))
    }

    func post(_ path: String, form: [String: String]) async throws -> HTTPClientResponse {
        let body = form.sorted { $0.key < $1.key }.map { "\(PercentEncoding.encode($0.key))=\(PercentEncoding.encode($0.value))" }.joined(separator: "&")
        return try await gateway.client.execute(HTTPClientRequest(
            method: "POST", url: base + path, headers: [HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded")],
            body: Array(body.utf8)))
    }

    /// The start URL an SDK would open.
    func startURL(_ provider: String, opts: String? = nil, extra: [String: String] = [:], origin: String? = LoginBench.origin) -> String {
        var query: [String: String] = ["k": key]
        if let origin { query["d"] = origin + "/" }
        if let opts { query["opts"] = opts }
        query.merge(extra) { _, new in new }
        return base + "/auth/\(provider)?" + query.sorted { $0.key < $1.key }
            .map { "\($0.key)=\(PercentEncoding.encode($0.value))" }.joined(separator: "&")
    }

    /// Plays the browser: start, follow the provider's redirect (auto-consent), and return the
    /// gateway's final answer to the callback.
    /// A popup login with a client-side state, as the JS SDK runs it: the message posted to the page.
    func clientLogin(_ provider: String, state: String = "c") async throws -> JSONValue {
        try LoginBench.message(try await login(provider, opts: #"{"state":"\#(state)","state_type":"client"}"#))
    }

    /// `POST /auth/access_token` with the app's key and secret, as a backend redeems a code.
    func redeem(_ code: String) async throws -> HTTPClientResponse {
        try await post("/auth/access_token", form: ["code": code, "key": key, "secret": secret])
    }

    /// A server-side login with an app state: the one-time code, redeemed.
    func serverSideTokens(_ provider: String, state: String) async throws -> HTTPClientResponse {
        let message = try LoginBench.message(try await login(provider, opts: #"{"state":"\#(state)"}"#))
        guard let code = message["data"]?["code"]?.stringValue else { throw RawHTTPError("no code in \(message)") }
        return try await redeem(code)
    }

    func login(_ provider: String, opts: String? = nil, extra: [String: String] = [:]) async throws -> HTTPClientResponse {
        let start = try await get(startURL(provider, opts: opts, extra: extra))
        guard start.status == 302, let authorize = start.header("location") else {
            throw RawHTTPError("start answered \(start.status): \(String(decoding: start.body, as: UTF8.self))")
        }
        let consent = try await get(authorize)
        if consent.status == 200, let form = LoginBench.formPost(consent) {
            return try await post("/auth", form: form)
        }
        guard consent.status == 302, let callback = consent.header("location") else {
            throw RawHTTPError("the provider answered \(consent.status)")
        }
        return try await get(callback)
    }

    /// The auto-submitting form a `response_mode=form_post` provider returns.
    static func formPost(_ response: HTTPClientResponse) -> [String: String]? {
        let html = String(decoding: response.body, as: UTF8.self)
        guard html.contains("<form") else { return nil }
        var fields: [String: String] = [:]
        let pattern = try? NSRegularExpression(pattern: #"name="([^"]+)"\s+value="([^"]*)""#)
        for match in pattern?.matches(in: html, range: NSRange(html.startIndex..., in: html)) ?? [] {
            if let name = Range(match.range(at: 1), in: html), let value = Range(match.range(at: 2), in: html) {
                var text = String(html[value])
                for (entity, character) in [("&quot;", "\""), ("&lt;", "<"), ("&gt;", ">"), ("&#x27;", "'"), ("&#39;", "'"), ("&amp;", "&")] {
                    text = text.replacingOccurrences(of: entity, with: character)
                }
                fields[String(html[name])] = text
            }
        }
        return fields
    }

    /// The OAuth.io message in a popup page (`var msg = "…";`), parsed.
    static func message(_ response: HTTPClientResponse) throws -> JSONValue {
        let html = String(decoding: response.body, as: UTF8.self)
        guard let start = html.range(of: "var msg = "), let end = html.range(of: ";\n", range: start.upperBound..<html.endIndex) else {
            throw RawHTTPError("no message in page: \(html.prefix(300))")
        }
        let literal = String(html[start.upperBound..<end.lowerBound])
        let text = try JSONCoding.decode(String.self, from: Array(literal.utf8))
        return try JSONCoding.decode(JSONValue.self, from: Array(text.utf8))
    }

    /// The message carried after `oauthio=` in a URL (fragment or query).
    static func message(inURL url: String) throws -> JSONValue {
        guard let range = url.range(of: "oauthio=") else { throw RawHTTPError("no oauthio in \(url)") }
        let encoded = url[range.upperBound...].prefix { $0 != "&" && $0 != "#" }
        guard let text = PercentEncoding.decode(encoded) else { throw RawHTTPError("bad encoding") }
        return try JSONCoding.decode(JSONValue.self, from: Array(text.utf8))
    }
}
