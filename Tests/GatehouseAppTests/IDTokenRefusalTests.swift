import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// Issue 41: a full OpenID login through the real gateway, where the mock provider's token
/// answer carries an id_token spoiled in exactly one way. Each test expects the refusal its
/// own check gives, so it fails if that check is missing, even while the others hold.
@Suite("ID token refusals", .serialized)
struct IDTokenRefusalTests {
    static let prefix = "The id_token is not valid: "

    @Test("a tampered signature is refused as such", arguments: TestStore.allCases)
    func tamperedSignature(store: TestStore) async throws {
        let message = try await refusal(.signature, store: store)
        #expect(message == Self.prefix + "the signature does not verify")
    }

    @Test("an id_token for another client is refused for its audience", arguments: TestStore.allCases)
    func wrongAudience(store: TestStore) async throws {
        let message = try await refusal(.audience, store: store)
        #expect(message == Self.prefix + "the token's audience (aud) is not client-1")
    }

    @Test("an expired id_token is refused for its expiry", arguments: TestStore.allCases)
    func expired(store: TestStore) async throws {
        let message = try await refusal(.expired, store: store)
        // The mock backdates exp by 600 s; a slow machine may add seconds before the check.
        let pattern = #"^The id_token is not valid: the token expired 6[0-9]{2} s ago$"#
        #expect(message.range(of: pattern, options: .regularExpression) != nil, "\(message)")
    }

    @Test("an id_token with another nonce is refused for its nonce", arguments: TestStore.allCases)
    func nonceMismatch(store: TestStore) async throws {
        let message = try await refusal(.nonce, store: store)
        #expect(message == Self.prefix + "the token's nonce is not the one sent with the request")
    }

    @Test(
        "an id_token naming a key the JWKS lacks, even refetched, is refused for the unknown key",
        arguments: TestStore.allCases)
    func unknownKey(store: TestStore) async throws {
        let refused = try await refused(.kid, store: store)
        let reason = "the signing key is unknown: the set has no RS256 key with kid mock-rsa-unknown"
        #expect(refused.message == Self.prefix + reason)
        // The set was cached by the valid login, so the unknown kid made the gateway ask again.
        #expect(refused.jwksFetches.after > refused.jwksFetches.before, "JWKS fetches \(refused.jwksFetches)")
    }

    /// The refused login's message, and the mock's JWKS fetch count just before and after it.
    struct Refused {
        let message: String
        let jwksFetches: (before: Int, after: Int)
    }

    func refusal(_ fault: IDTokenFault, store: TestStore) async throws -> String {
        try await refused(fault, store: store).message
    }

    /// Logs in once with a valid id_token (so the bench itself is sound and the key set is
    /// cached), then once with `fault`; checks what else the refusal's page carries.
    func refused(_ fault: IDTokenFault, store: TestStore) async throws -> Refused {
        let bench = try await LoginBench.start(store: try await store.location())
        let opts = #"{"state":"s-\#(fault.rawValue)","state_type":"client","scope":"openid"}"#
        let valid = try LoginBench.message(try await bench.login("mockpkce", opts: opts))
        #expect(valid["status"] == "success", "\(valid)")

        try await bench.mock.setIDTokenFault(fault)
        let before = try await bench.mock.stats()["jwks"] ?? -1
        let page = try await bench.login("mockpkce", opts: opts)
        let after = try await bench.mock.stats()["jwks"] ?? -1
        let message = try LoginBench.message(page)
        #expect(message["status"] == "error", "\(message)")
        #expect(message["state"] == .string("s-\(fault.rawValue)"))
        #expect(message["provider"] == "mockpkce")
        // Neither the refused token nor anything it came with reaches the page.
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(!html.contains("eyJ"), "a JWT on the page")
        #expect(!html.contains("mat_") && !html.contains("mrt_"), "a token on the page")
        #expect(!html.contains(MockProvider.clientSecret))
        try await bench.stop()
        let text = message["message"]?.stringValue ?? "no message in \(message)"
        return Refused(message: text, jwksFetches: (before, after))
    }
}
