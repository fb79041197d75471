import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// Replays of a native identity token (docs/apple.md, "Identity-token rules"): a nonce-bound
/// token signs in once and only with its nonce; a token without one signs in once from the
/// device (`k` + `state`) and any number of times from the backend (`key` + `secret`).
@Suite("Sign in with Apple: replayed identity tokens", .serialized)
struct AppleReplayTests {
    /// Nonces are fresh per run: a shared test Redis outlives the gateway, and spent ones are
    /// remembered for a day.
    static func freshNonce() -> String { "n-" + UUID().uuidString }

    @Test(
        "a nonce-bound token: refused without its nonce, on both paths, and its nonce is spent once",
        arguments: TestStore.allCases)
    func nonceBound(store: TestStore) async throws {
        let bench = try await AppleBench.start(store: try await store.location())
        let raw = Self.freshNonce()
        let hashed = try await AppleFlowTests.sha256Hex(raw)
        let credential = try await bench.apple.nativeCredential(nonce: hashed)
        let backend = ["key": bench.key, "secret": bench.secret, "identity_token": credential.identityToken]
        let device = ["k": bench.key, "state": "s1", "identity_token": credential.identityToken]
        let bound = "the token is bound to a nonce and the request sent none"

        for fields in [backend, device] {
            let bare = try await bench.native(fields)
            AppleRejectionTests.expectRefused(bare, bound, "no nonce, \(fields.keys.sorted())")
            #expect(bare.json?["data"]?["code"] == nil)
        }
        let signedIn = try await bench.native(backend.merging(["nonce": raw]) { $1 })
        #expect(signedIn.status == 200, "\(String(decoding: signedIn.body, as: UTF8.self))")
        for fields in [backend, device] {
            for nonce in [raw, hashed] {
                // The token's own nonce claim sent as if it were the raw value is the same nonce.
                let replayed = try await bench.native(fields.merging(["nonce": nonce]) { $1 })
                AppleRejectionTests.expectRefused(replayed, "the nonce was already used", "replay, \(fields.keys.sorted())")
            }
            AppleRejectionTests.expectRefused(try await bench.native(fields), bound, "no nonce after use")
        }

        // `me` with the identity token verifies it again: not a sign-in, so no nonce is asked for.
        let me = try await bench.gateway.client.execute(HTTPClientRequest(
            url: "http://127.0.0.1:\(bench.gateway.port)/auth/apple/me",
            headers: [
                HTTPHeader(name: "oauthio", value: "k=\(bench.key)&id_token=\(credential.identityToken)"),
                HTTPHeader(name: "Origin", value: "http://localhost"),
            ]))
        #expect(me.status == 200, "\(String(decoding: me.body, as: UTF8.self))")
        #expect(me.json?["data"]?["id"] == .string(MockApple.subject))
        try await bench.stop()
    }

    @Test("a token without a nonce: once from the device, within its lifetime from the backend", arguments: TestStore.allCases)
    func withoutNonce(store: TestStore) async throws {
        let bench = try await AppleBench.start(store: try await store.location())
        let credential = try await bench.apple.nativeCredential(firstLogin: false)
        let device = ["k": bench.key, "state": "s1", "identity_token": credential.identityToken]
        let first = try await bench.native(device)
        #expect(first.status == 200 && first.json?["data"]?["code"]?.stringValue != nil)
        for state in ["s1", "s2"] {
            let again = try await bench.native(device.merging(["state": state]) { $1 })
            let reason = "the identity token was already used to sign in"
            AppleRejectionTests.expectRefused(again, reason, "device replay, state \(state)")
            #expect(again.json?["data"]?["code"] == nil, "no fresh one-time code")
        }
        // The backend holds the app's secret: it may verify a token it was handed while the token is valid.
        for _ in 0..<2 {
            let backend = try await bench.native([
                "key": bench.key, "secret": bench.secret, "identity_token": credential.identityToken,
            ])
            #expect(backend.status == 200, "\(String(decoding: backend.body, as: UTF8.self))")
        }
        try await bench.stop()
    }

    @Test("a device sign-in with a code sent again gets the first exchange's answer", arguments: TestStore.allCases)
    func deviceRetryWithCode(store: TestStore) async throws {
        let bench = try await AppleBench.start(store: try await store.location())
        let raw = Self.freshNonce()
        let credential = try await bench.apple.nativeCredential(nonce: try await AppleFlowTests.sha256Hex(raw))
        let fields = [
            "k": bench.key, "state": "s1", "identity_token": credential.identityToken,
            "authorization_code": credential.authorizationCode, "nonce": raw,
        ]
        var refreshTokens: [JSONValue?] = []
        for _ in 0..<2 {
            let answer = try await bench.native(fields)
            #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
            let code = try #require(answer.json?["data"]?["code"]?.stringValue)
            let form = "code=\(code)&key=\(bench.key)&secret=\(bench.secret)"
            let redeemed = try await bench.gateway.client.execute(HTTPClientRequest(
                method: "POST", url: "http://127.0.0.1:\(bench.gateway.port)/auth/access_token",
                headers: [HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded")], body: Array(form.utf8)))
            refreshTokens.append(redeemed.json?["refresh_token"])
        }
        #expect(refreshTokens[0] != nil && refreshTokens[0] == refreshTokens[1], "the recorded exchange, not a second one")
        #expect(try await bench.apple.stats()["token_code"] == 1)
        var bare = fields
        bare["nonce"] = nil
        let retried = try await bench.native(bare)
        AppleRejectionTests.expectRefused(retried, "the token is bound to a nonce", "retry without the nonce")
        try await bench.stop()
    }
}
