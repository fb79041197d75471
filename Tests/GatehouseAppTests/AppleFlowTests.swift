import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// Sign in with Apple against the local Apple mock: native sign-in in both modes, the web
/// form_post flow, refresh, revoke and notifications (rejections: AppleRejectionTests,
/// replays: AppleReplayTests).
struct AppleBench {
    let gateway: Gateway
    let apple: MockApple
    let key: String
    let secret: String

    static func definition(_ base: String) -> String {
        """
        {"name": "Apple (mock)", "url": "\(base)",
         "oauth2": {
           "authorize": {"url": "/auth/authorize", "query": {"client_id": "{client_id}", "response_type": "code", "response_mode": "form_post",
                         "redirect_uri": "{{callback}}", "scope": "{scope}", "state": "{{state}}"}},
           "access_token": "/auth/token", "refresh": "/auth/token",
           "revoke": {"url": "/auth/revoke", "query": {"client_id": "{client_id}", "client_secret": "{client_secret}", "token": "{{token}}",
                      "token_type_hint": "{{token_type_hint}}"}},
           "parameters": {"client_id": "string", "client_secret": "string", "services_id": "string", "client_ids": "string",
                          "team_id": "string", "key_id": "string", "private_key": "string", "notification_url": "string",
                          "scope": {"values": {"name": "", "email": ""}}}},
         "openid": {"issuer": "\(base)", "jwks_uri": "\(base)/auth/keys"},
         "native": {"kind": "apple"}}
        """
    }

    /// `clientID` is the keyset's `client_id`; the Services ID is always set beside it.
    static func start(
        forwardNotifications: Bool = false, clientID: String = MockApple.servicesID, store: String = "memory:"
    ) async throws -> AppleBench {
        let apple = try await MockApple.start()
        let workspace = try Workspace(providers: ["apple": definition(apple.baseURL)])
        let gateway = try await Gateway.start(workspace: workspace, store: store)
        var parameters: JSONObject = [
            "client_id": .string(clientID), "services_id": .string(MockApple.servicesID),
            "client_ids": .array([.string(MockApple.bundleID), .string(MockApple.watchBundleID)]),
            "team_id": .string(MockApple.teamID), "key_id": .string(MockApple.keyID), "private_key": .string(MockApple.privateKeyPEM),
            "scope": ["name", "email"],
        ]
        if forwardNotifications { parameters["notification_url"] = .string(apple.webhookURL) }
        let (key, secret) = try await createApp(on: gateway, name: "ios", parameters: parameters)
        return AppleBench(gateway: gateway, apple: apple, key: key, secret: secret)
    }

    /// Creates an app on `gateway` with an Apple keyset of `parameters`; its key and secret.
    static func createApp(on gateway: Gateway, name: String, parameters: JSONObject) async throws
        -> (key: String, secret: String)
    {
        let created = try await gateway.send("POST", "/api/admin/apps", body: #"{"name":"\#(name)","domains":["localhost"]}"#)
        guard let key = created.json?["key"]?.stringValue, let secret = created.json?["secret"]?.stringValue else {
            throw RawHTTPError("app creation failed")
        }
        let keyset = JSONValue.object(["parameters": .object(parameters)])
        let body = String(decoding: try JSONCoding.encode(keyset), as: UTF8.self)
        let stored = try await gateway.send("PUT", "/api/admin/apps/\(key)/keysets/apple", body: body)
        guard stored.status == 200 else { throw RawHTTPError("keyset: \(stored.status) \(String(decoding: stored.body, as: UTF8.self))") }
        return (key, secret)
    }

    func native(_ fields: [String: String]) async throws -> HTTPClientResponse {
        let body = String(decoding: try JSONCoding.encode(fields), as: UTF8.self)
        return try await gateway.client.execute(HTTPClientRequest(
            method: "POST", url: "http://127.0.0.1:\(gateway.port)/auth/apple/native",
            headers: [HTTPHeader(name: "Content-Type", value: "application/json")], body: Array(body.utf8)))
    }

    /// `POST /auth/refresh_token/apple` as app `key` with `secret`, naming `clientID` if given.
    func refresh(_ token: String, key: String, secret: String, clientID: String? = MockApple.bundleID) async throws
        -> HTTPClientResponse
    {
        var form = "token=\(PercentEncoding.encode(token))&key=\(key)&secret=\(secret)"
        if let clientID { form += "&client_id=\(PercentEncoding.encode(clientID))" }
        return try await gateway.client.execute(HTTPClientRequest(
            method: "POST", url: "http://127.0.0.1:\(gateway.port)/auth/refresh_token/apple",
            headers: [HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded")], body: Array(form.utf8)))
    }

    func stop() async throws {
        _ = try await gateway.stop()
        apple.stop()
    }
}

@Suite("Sign in with Apple", .serialized)
struct AppleFlowTests {
    @Test("native, backend mode: verify, exchange the code as the token's audience, keep the first-login name")
    func nativeBackend() async throws {
        let bench = try await AppleBench.start()
        let hashedNonce = "9c1b5b7b0e6e2b0f3b1f0f2f7d6c8e4a1f6f2f1b0c7d3e5a9b8c7d6e5f4a3b2c"
        let credential = try await bench.apple.nativeCredential(nonce: hashedNonce)
        let refused = try await bench.native([
            "key": bench.key, "secret": bench.secret, "identity_token": credential.identityToken, "nonce": "wrong-raw-nonce",
        ])
        #expect(refused.status == 401)
        #expect(refused.json?["error"] == "invalid_token")

        let raw = "raw-nonce-value"
        let hexNonce = try await Self.sha256Hex(raw)
        let fresh = try await bench.apple.nativeCredential(nonce: hexNonce)
        let answer = try await bench.native([
            "key": bench.key, "secret": bench.secret, "identity_token": fresh.identityToken, "authorization_code": fresh.authorizationCode,
            "user": fresh.user ?? "", "nonce": raw,
        ])
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        let body = try #require(answer.json)
        #expect(body["provider"] == "apple")
        #expect(body["access_token"] != nil && body["refresh_token"] != nil && body["id_token"] != nil)
        let user = try #require(body["user"])
        #expect(user["id"] == .string(MockApple.subject))
        #expect(user["email"] == .string(MockApple.email))
        #expect(user["email_verified"] == true, "Apple's string \"true\" becomes a boolean")
        #expect(user["firstname"] == "Ada" && user["lastname"] == "Lovelace" && user["name"] == "Ada Lovelace")
        #expect(user["raw"]?["sub"] == .string(MockApple.subject))
        let replayed = try await bench.native(["key": bench.key, "secret": bench.secret, "identity_token": fresh.identityToken, "nonce": raw])
        #expect(replayed.status == 401, "a nonce signs in once")
        #expect(replayed.json?["error_description"]?.stringValue?.contains("already used") == true)

        let retried = try await bench.native([
            "key": bench.key, "secret": bench.secret, "identity_token": fresh.identityToken, "authorization_code": fresh.authorizationCode,
            "nonce": raw,
        ])
        #expect(retried.status == 200, "the same sign-in again: the recorded exchange, not a second one Apple would refuse")
        #expect(retried.json?["refresh_token"] == body["refresh_token"])
        #expect(try await bench.apple.stats()["token_code"] == 1)
        let otherApp = try await bench.apple.nativeCredential()
        let reused = try await bench.native([
            "key": bench.key, "secret": bench.secret, "identity_token": otherApp.identityToken, "authorization_code": fresh.authorizationCode,
        ])
        #expect(reused.status == 401, "a code with another sign-in's identity token")
        #expect(reused.json?["error_description"]?.stringValue?.contains("c_hash") == true)

        let later = try await bench.apple.nativeCredential(clientID: MockApple.watchBundleID, firstLogin: false)
        let again = try await bench.native(["key": bench.key, "secret": bench.secret, "identity_token": later.identityToken])
        #expect(again.json?["user"]?["name"] == "Ada Lovelace", "the name from the first login is kept")
        let sameUser = try await bench.native([
            "key": bench.key, "secret": bench.secret, "identity_token": later.identityToken, "user": MockApple.subject,
        ])
        #expect(sameUser.status == 200, "the device's user identifier, matching the subject")
        let otherUser = try await bench.native([
            "key": bench.key, "secret": bench.secret, "identity_token": later.identityToken, "user": "000999.someone.else",
        ])
        #expect(otherUser.status == 401, "a user identifier that is not the token's subject")
        let wrongSecret = try await bench.native(["key": bench.key, "secret": String(repeating: "A", count: 27), "identity_token": later.identityToken])
        #expect(wrongSecret.status == 401)
        try await bench.stop()
    }

    @Test("me after a native sign-in: found by the access token, or by the identity token alone")
    func meAfterNative() async throws {
        let bench = try await AppleBench.start()
        let base = "http://127.0.0.1:\(bench.gateway.port)"
        func me(_ oauthio: String, query: String = "") async throws -> HTTPClientResponse {
            try await bench.gateway.client.execute(HTTPClientRequest(
                url: base + "/auth/apple/me" + query,
                headers: [HTTPHeader(name: "oauthio", value: oauthio), HTTPHeader(name: "Origin", value: "http://localhost")]))
        }
        let credential = try await bench.apple.nativeCredential()
        let signedIn = try await bench.native([
            "key": bench.key, "secret": bench.secret, "identity_token": credential.identityToken,
            "authorization_code": credential.authorizationCode, "user": credential.user ?? "",
        ])
        let access = try #require(signedIn.json?["access_token"]?.stringValue)
        let answer = try await me("k=\(bench.key)&access_token=\(access)")
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
        #expect(answer.header("access-control-allow-origin") == "http://localhost")
        let data = try #require(answer.json?["data"])
        #expect(data["id"] == .string(MockApple.subject) && data["email"] == .string(MockApple.email) && data["email_verified"] == true)
        #expect(data["name"] == "Ada Lovelace" && data["firstname"] == "Ada")
        #expect(data["raw"]?["sub"] == .string(MockApple.subject))
        let filtered = try await me("k=\(bench.key)&token=\(access)", query: "?filter=email")
        #expect(filtered.json?["data"]?.objectValue?.keys.sorted() == ["email", "raw"])

        // Without a code exchange the app holds only the identity token.
        let later = try await bench.apple.nativeCredential(firstLogin: false)
        _ = try await bench.native(["key": bench.key, "secret": bench.secret, "identity_token": later.identityToken])
        let byIDToken = try await me("k=\(bench.key)&id_token=\(later.identityToken)")
        #expect(byIDToken.json?["data"]?["id"] == .string(MockApple.subject))
        #expect(byIDToken.json?["data"]?["name"] == "Ada Lovelace", "the first login's name is kept")

        let unknown = try await me("k=\(bench.key)&access_token=not-a-session-token")
        #expect(unknown.status == 401)
        let other = try await bench.gateway.send("POST", "/api/admin/apps", body: #"{"name":"other","domains":["localhost"]}"#)
        let otherKey = try #require(other.json?["key"]?.stringValue)
        _ = try await bench.gateway.send("PUT", "/api/admin/apps/\(otherKey)/keysets/apple", body: #"{"parameters":{"client_id":"x"}}"#)
        let foreign = try await me("k=\(otherKey)&access_token=\(access)")
        #expect(foreign.status == 401, "another app cannot read this app's session")

        // consent-revoked: sign-out and unlink, so what the earlier sign-ins left answers no more.
        let revokedConsent = try await bench.apple.notify(
            gatewayURL: base + "/auth/apple/notifications", aud: MockApple.bundleID, type: "consent-revoked", sub: MockApple.subject)
        #expect(revokedConsent == 200)
        #expect(try await me("k=\(bench.key)&access_token=\(access)").status == 401)
        #expect(try await me("k=\(bench.key)&id_token=\(later.identityToken)").status == 401)
        try await bench.stop()
    }

    @Test("native, app mode: a one-time code redeemed by the backend")
    func nativeAppMode() async throws {
        let bench = try await AppleBench.start()
        let credential = try await bench.apple.nativeCredential()
        let answer = try await bench.native([
            "k": bench.key, "state": "app-state", "identity_token": credential.identityToken,
            "authorization_code": credential.authorizationCode, "user": credential.user ?? "",
        ])
        #expect(answer.status == 200)
        #expect(answer.json?["status"] == "success" && answer.json?["state"] == "app-state" && answer.json?["provider"] == "apple")
        let code = try #require(answer.json?["data"]?["code"]?.stringValue)
        let form = "code=\(code)&key=\(bench.key)&secret=\(bench.secret)"
        let redeemed = try await bench.gateway.client.execute(HTTPClientRequest(
            method: "POST", url: "http://127.0.0.1:\(bench.gateway.port)/auth/access_token",
            headers: [HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded")], body: Array(form.utf8)))
        #expect(redeemed.json?["refresh_token"] != nil)
        #expect(redeemed.json?["user"]?["firstname"] == "Ada")
        #expect(redeemed.json?["state"] == "app-state")
        try await bench.stop()
    }

    @Test(
        "web sign-in: form_post callback, minted client_secret, name captured on first consent",
        arguments: [MockApple.servicesID, MockApple.bundleID])
    func web(keysetClientID: String) async throws {
        // With a keyset client_id other than the Services ID, authorize and exchange must
        // still both use the Services ID.
        let bench = try await AppleBench.start(clientID: keysetClientID)
        let base = "http://127.0.0.1:\(bench.gateway.port)"
        let start = try await bench.gateway.client.execute(HTTPClientRequest(
            method: "GET", url: base + "/auth/apple?k=\(bench.key)&d=http%3A%2F%2Flocalhost%2F&opts=%7B%22state%22%3A%22w%22%2C%22state_type%22%3A%22client%22%7D"))
        let authorize = try #require(start.header("location"))
        #expect(authorize.contains("response_mode=form_post") && authorize.contains("nonce="))
        let consent = try await bench.gateway.client.execute(HTTPClientRequest(method: "GET", url: authorize))
        let form = try #require(LoginBench.formPost(consent))
        #expect(form["user"] != nil)
        let body = form.map { "\(PercentEncoding.encode($0.key))=\(PercentEncoding.encode($0.value))" }.joined(separator: "&")
        let page = try await bench.gateway.client.execute(HTTPClientRequest(
            method: "POST", url: base + "/auth", headers: [HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded")],
            body: Array(body.utf8)))
        let message = try LoginBench.message(page)
        #expect(message["status"] == "success", "\(message)")
        #expect(message["data"]?["id_token"] != nil)
        #expect(message["data"]?["user"]?["firstname"] == "Ada")
        #expect(message["data"]?["user"]?["email"] == .string(MockApple.email))
        try await bench.stop()
    }

    @Test("refresh is checked with Apple at most once a day; revoke goes upstream")
    func lifecycle() async throws {
        let bench = try await AppleBench.start()
        let credential = try await bench.apple.nativeCredential()
        let signed = try await bench.native([
            "key": bench.key, "secret": bench.secret, "identity_token": credential.identityToken,
            "authorization_code": credential.authorizationCode,
        ])
        let refreshToken = try #require(signed.json?["refresh_token"]?.stringValue)
        func refresh(_ token: String) async throws -> HTTPClientResponse {
            try await bench.refresh(token, key: bench.key, secret: bench.secret)
        }
        for _ in 0..<3 {
            let refreshed = try await refresh(refreshToken)
            #expect(refreshed.status == 200)
            #expect(refreshed.json?["access_token"] != nil)
        }
        #expect(try await bench.apple.stats()["token_refresh"] == 1, "one upstream check for three calls")
        let revokeForm = "token=\(PercentEncoding.encode(refreshToken))&key=\(bench.key)&secret=\(bench.secret)&client_id=\(MockApple.bundleID)"
        let revoked = try await bench.gateway.client.execute(HTTPClientRequest(
            method: "POST", url: "http://127.0.0.1:\(bench.gateway.port)/auth/revoke/apple",
            headers: [HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded")], body: Array(revokeForm.utf8)))
        #expect(revoked.status == 200)
        #expect(try await bench.apple.stats()["revoke"] == 1)
        #expect(try await refresh(refreshToken).status == 400, "a revoked token no longer answers from the day's check")
        #expect(try await bench.apple.stats()["token_refresh"] == 1, "and Apple is not asked")
        // A token Apple refuses (invalid_grant: revoked elsewhere) is refused from then on without asking again.
        #expect(try await refresh("r-revoked-elsewhere").status == 400)
        #expect(try await bench.apple.stats()["token_refresh"] == 2)
        #expect(try await refresh("r-revoked-elsewhere").status == 400)
        #expect(try await bench.apple.stats()["token_refresh"] == 2, "deauthorized: one upstream check")
        try await bench.stop()
    }

    @Test("the day's refresh check answers only the app and client id it was made for", arguments: TestStore.allCases)
    func refreshCheckPerApp(store: TestStore) async throws {
        let bench = try await AppleBench.start(store: try await store.location())
        // App B: another customer of the gateway, with its own Apple team, key and ids.
        let (otherKey, otherSecret) = try await AppleBench.createApp(on: bench.gateway, name: "other", parameters: [
            "client_id": .string(MockApple.SecondTeam.servicesID), "client_ids": .string(MockApple.SecondTeam.bundleID),
            "team_id": .string(MockApple.SecondTeam.teamID), "key_id": .string(MockApple.SecondTeam.keyID),
            "private_key": .string(MockApple.SecondTeam.privateKeyPEM),
        ])
        let credential = try await bench.apple.nativeCredential()
        let signed = try await bench.native([
            "key": bench.key, "secret": bench.secret, "identity_token": credential.identityToken,
            "authorization_code": credential.authorizationCode,
        ])
        let refreshToken = try #require(signed.json?["refresh_token"]?.stringValue)
        let first = try await bench.refresh(refreshToken, key: bench.key, secret: bench.secret)
        let firstAccess = try #require(first.json?["access_token"]?.stringValue)

        for clientID in [MockApple.SecondTeam.bundleID, nil] {
            let foreign = try await bench.refresh(refreshToken, key: otherKey, secret: otherSecret, clientID: clientID)
            #expect(foreign.status == 400, "app B with its own client id \(clientID ?? "(web)"): Apple's answer for B")
            #expect(foreign.json?["message"]?.stringValue?.contains("client_id mismatch") == true)
            #expect(foreign.json?["data"]?["access_token"] == nil && foreign.json?["access_token"] == nil)
        }
        #expect(try await bench.apple.stats()["token_refresh"] == 3, "B's calls went to Apple with B's credentials")
        let borrowed = try await bench.refresh(refreshToken, key: otherKey, secret: otherSecret, clientID: MockApple.bundleID)
        #expect(borrowed.status == 400, "app A's bundle id is not one of B's client ids")
        #expect(borrowed.json?["access_token"] == nil)
        #expect(!String(decoding: borrowed.body, as: UTF8.self).contains(firstAccess))

        let again = try await bench.refresh(refreshToken, key: bench.key, secret: bench.secret)
        #expect(again.status == 200 && again.json?["access_token"]?.stringValue == firstAccess, "A still gets its day's answer")
        let web = try await bench.refresh(refreshToken, key: bench.key, secret: bench.secret, clientID: nil)
        #expect(web.status == 400, "the same app under its web client id is Apple's to answer, not the bundle id's check")
        #expect(try await bench.apple.stats()["token_refresh"] == 4)
        try await bench.stop()
    }

    @Test("a key rotation mid-run: one refetch picks up the new key; an unpublished key fails after exactly one refetch")
    func keyRotation() async throws {
        let bench = try await AppleBench.start()
        func signIn() async throws -> Int {
            let credential = try await bench.apple.nativeCredential()
            return try await bench.native(["key": bench.key, "secret": bench.secret, "identity_token": credential.identityToken]).status
        }
        #expect(try await signIn() == 200)
        #expect(try await bench.apple.stats()["keys"] == 1)
        try await bench.apple.rotate(publish: true)
        #expect(try await signIn() == 200)
        #expect(try await signIn() == 200)
        #expect(try await bench.apple.stats()["keys"] == 2, "one refetch for the new kid")

        let bench2 = try await AppleBench.start()
        #expect(try await { () async throws -> Int in
            let credential = try await bench2.apple.nativeCredential()
            return try await bench2.native(["key": bench2.key, "secret": bench2.secret, "identity_token": credential.identityToken]).status
        }() == 200)
        try await bench2.apple.rotate(publish: false)
        for _ in 0..<3 {
            let credential = try await bench2.apple.nativeCredential()
            let answer = try await bench2.native(["key": bench2.key, "secret": bench2.secret, "identity_token": credential.identityToken])
            #expect(answer.status == 401)
        }
        #expect(try await bench2.apple.stats()["keys"] == 2, "exactly one refetch for the unknown kid, then errors")
        try await bench2.stop()
        try await bench.stop()
    }

    @Test("notifications: verified, parsed from the events string, recorded once by jti")
    func notifications() async throws {
        let bench = try await AppleBench.start()
        let url = "http://127.0.0.1:\(bench.gateway.port)/auth/apple/notifications"
        for type in ["email-disabled", "email-enabled", "consent-revoked", "account-delete", "account-deleted"] {
            let status = try await bench.apple.notify(gatewayURL: url, aud: MockApple.bundleID, type: type, sub: MockApple.subject, email: MockApple.email)
            #expect(status == 200, "\(type)")
        }
        let sent = try await bench.apple.notification(gatewayURL: url, aud: MockApple.bundleID, type: "email-disabled", sub: MockApple.subject)
        let duplicate = try await bench.gateway.client.execute(HTTPClientRequest(
            method: "POST", url: url, headers: [HTTPHeader(name: "Content-Type", value: "application/json")],
            body: Array(#"{"payload":"\#(sent.payload)"}"#.utf8)))
        #expect(duplicate.status == 200)
        #expect(duplicate.json?["status"] == "duplicate", "recorded once per jti")
        let foreign = try await bench.apple.notify(gatewayURL: url, aud: "com.someone.else", type: "consent-revoked", sub: "x")
        #expect(foreign == 400, "an audience no app accepts is refused")
        let forged = try await bench.gateway.client.execute(HTTPClientRequest(
            method: "POST", url: url, headers: [HTTPHeader(name: "Content-Type", value: "application/json")],
            body: Array(#"{"payload":"eyJhbGciOiJub25lIn0.eyJpc3MiOiJ4In0."}"#.utf8)))
        #expect(forged.status == 400)
        try await bench.stop()
    }

    @Test("notifications reach the app's notification_url, retried after a failed delivery")
    func notificationForwarding() async throws {
        let bench = try await AppleBench.start(forwardNotifications: true)
        let url = "http://127.0.0.1:\(bench.gateway.port)/auth/apple/notifications"
        try await bench.apple.failWebhook(count: 1)
        let status = try await bench.apple.notify(gatewayURL: url, aud: MockApple.bundleID, type: "consent-revoked", sub: MockApple.subject)
        #expect(status == 200)
        // The first delivery fails; the retry comes a second later.
        var events: [(type: String, sub: String)] = []
        for _ in 0..<60 where events.isEmpty {
            try await Task.sleep(for: .milliseconds(100))
            events = try await bench.apple.webhookEvents()
        }
        #expect(events.count == 1)
        #expect(events.first?.type == "consent-revoked" && events.first?.sub == MockApple.subject)
        #expect(try await bench.apple.stats()["webhook_attempts"] == 2)
        try await bench.stop()
    }

    static func sha256Hex(_ text: String) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", "import hashlib,sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest())", text]
        let pipe = Pipe()
        process.standardOutput = pipe
        try launch(process)
        // Read to the end off the cooperative pool: a blocked pool thread stalls other suites.
        let output = try await offPool { pipe.fileHandleForReading.readDataToEndOfFile() }
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
