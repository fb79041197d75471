import Foundation

/// A local stand-in for an outside OAuth provider: `Tests/Fixtures/mock_provider.py` run as a
/// python3 child process on 127.0.0.1. It speaks OAuth 2.0 + PKCE + OpenID Connect (RS256
/// id_tokens, JWKS, discovery) and OAuth 1.0a (HMAC-SHA1) in the providers' own wire formats;
/// see `Tests/Fixtures/README.md` for the endpoints. Start one per test so state never mixes.
public final class MockProvider: FixtureServer, @unchecked Sendable {
    /// The registered OAuth 2 client.
    public static let clientID = "client-1"
    public static let clientSecret = "secret-1"
    /// The registered OAuth 1.0a consumer.
    public static let consumerKey = "ck-1"
    public static let consumerSecret = "cs-1"

    /// Launches `python3 Tests/Fixtures/mock_provider.py --port 0` and waits for its
    /// `PORT <n>` line on a thread of its own, never on the cooperative pool.
    /// - Parameter tokenFormat: "json" (RFC 6749) or "form" (GitHub's default
    ///   application/x-www-form-urlencoded token responses).
    public static func start(tokenFormat: String = "json") async throws -> MockProvider {
        guard tokenFormat == "json" || tokenFormat == "form" else {
            throw MockProviderError("tokenFormat must be \"json\" or \"form\", not \"\(tokenFormat)\"")
        }
        return try await offPool {
            MockProvider(
                child: try MockProcess(
                    scriptName: "mock_provider.py", arguments: ["--token-format", tokenFormat], name: "mock provider"))
        }
    }

    /// `GET /_stats`: request counters ("authorize", "token", "refresh", "revoke", "user",
    /// "discovery", "jwks", "oauth1", "oauth1_request_token", "oauth1_authorize",
    /// "oauth1_access_token", "oauth1_account").
    public func stats() async throws -> [String: Int] {
        try await child.controlJSON("GET /_stats").compactMapValues(MockProcess.integer)
    }

    /// `POST /_reset`: forgets codes, tokens, nonces and counters; settings return to launch values.
    public func reset() async throws {
        _ = try await child.control("POST /_reset", form: "")
    }

    /// `GET /_config?token_format=...`: token responses as "json", "form", "wrapped" (the
    /// token endpoint then takes only JSON bodies and answers `{"data": {...}}`) or "prefixed"
    /// (Xiaomi's: a GET with the parameters in the query, answered `&&&START&&&{...}`).
    public func setTokenFormat(_ format: String) async throws {
        guard ["json", "form", "wrapped", "prefixed"].contains(format) else {
            throw MockProviderError("token format must be \"json\", \"form\", \"wrapped\" or \"prefixed\", not \"\(format)\"")
        }
        _ = try await child.control("GET /_config?token_format=\(format)")
    }

    /// `GET /_config?id_token_alg=...`: id_tokens signed with the mock's RSA key ("RS256") or
    /// MACed with the client secret ("HS256", "HS512").
    public func setIDTokenAlgorithm(_ algorithm: String) async throws {
        _ = try await child.control("GET /_config?id_token_alg=\(algorithm)")
    }

    /// `GET /_config?encrypt_to=...`: id_tokens and signed UserInfo answers are encrypted to the
    /// RSA `enc` key of the JWKS at `url` (an app's `/auth/:provider/jwks`), fetched once and
    /// kept until this is called again; "" turns it off.
    public func encryptTo(_ url: String) async throws {
        _ = try await child.control("GET /_config?encrypt_to=\(MockApple.queryEncoded(url))")
    }

    /// `GET /_config?request_encryption=...`: the JWKS publishes an `enc` key for `algorithm`
    /// (RSA-OAEP or RSA-OAEP-256) and request objects must come encrypted to it; "" turns it off.
    public func requireRequestEncryption(_ algorithm: String) async throws {
        _ = try await child.control("GET /_config?request_encryption=\(algorithm)")
    }

    /// `GET /_config?client_key_n=...`: the RSA public key (its modulus in hex, exponent 65537)
    /// that `clientID`'s `private_key_jwt` assertions must be signed with.
    public func setClientKey(modulusHex: String) async throws {
        _ = try await child.control("GET /_config?client_key_n=\(modulusHex)")
    }

    /// `GET /_config?dpop_nonce=...`: every DPoP proof must carry this nonce; one without it
    /// is answered `use_dpop_nonce` with a `DPoP-Nonce` header (RFC 9449 §8).
    public func setDPoPNonce(_ nonce: String) async throws {
        _ = try await child.control("GET /_config?dpop_nonce=\(nonce)")
    }
}

public struct MockProviderError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
