internal import GatehouseCore
internal import GatehouseCrypto
internal import HTTPClient
internal import JOSE
internal import ProviderEngine
internal import Synchronization

/// Verifies OpenID Connect id_tokens against the provider's JWKS, fetched through the
/// gateway's HTTP client and cached per key id by JOSE's `JWKSCache`, which also limits how
/// often an unknown `kid` can make us refetch. Fetched documents are also shared through the
/// store (`SharedJWKS`), so instances behind one Redis fetch each provider's keys about once.
struct IDTokenVerifier: Sendable {
    let cache: JWKSCache
    /// The keysets' `encryption_key`s, for providers that encrypt what they sign.
    let decryptionKeys = PEMKeyCache<RSACipherKey> { try? RSACipherKey(privatePEM: $0) }

    init(outbound: HTTPClient, metrics: Metrics, store: any Store) {
        let shared = SharedJWKS(store: store)
        cache = JWKSCache(fetcher: { url in
            if let copy = await shared.copy(url) {
                metrics.jwksFetches.increment("store", "ok")
                return copy
            }
            let response: HTTPClientResponse
            do {
                response = try await outbound.execute(HTTPClientRequest(method: "GET", url: url, timeout: .seconds(10)))
            } catch {
                metrics.jwksFetches.increment("upstream", "unreachable")
                throw error
            }
            guard response.status == 200 else {
                metrics.jwksFetches.increment("upstream", "error")
                throw JWKSFetchError(status: response.status)
            }
            metrics.jwksFetches.increment("upstream", "ok")
            await shared.publish(url, response.body)
            return response.body
        })
    }

    /// The keyset's values a token is checked with: `client_secret` keys HMAC-signed tokens,
    /// `encryption_key` opens encrypted ones, and so, while a provider still holds the key set
    /// it cached before a rotation, does `previous_encryption_key`.
    struct AppKeys: Sendable {
        let secret: String
        let encryptionKeys: [String]

        init(_ templates: TemplateContext) {
            secret = templates.keysetValue("client_secret")
            encryptionKeys = ["encryption_key", "previous_encryption_key"].map(templates.keysetValue).filter { !$0.isEmpty }
        }
    }

    /// nil when the token is valid; otherwise a short reason, safe to show (never the token).
    func verify(_ token: String, openid: OpenIDDefinition, audience: String, keys: AppKeys, nonce: String?) async -> String? {
        let verifier = JWTVerifier(issuer: openid.issuer, audience: audience)
        do throws(JOSEError) {
            _ = try await verified(token, openid: openid, verifier: verifier, keys: keys, nonce: nonce)
            return nil
        } catch {
            return error.reason
        }
    }

    /// The signed token inside `token` where the definition says the provider encrypts: an
    /// encrypted provider's plain token is refused, so a stripped layer is noticed.
    private func opened(_ token: String, openid: OpenIDDefinition, keys: AppKeys) throws(JOSEError) -> String {
        guard openid.encrypted else { return token }
        guard JWE.isEncrypted(token) else { throw .malformed("the provider encrypts its tokens, and this one is not encrypted") }
        guard !keys.encryptionKeys.isEmpty else { throw .invalidKey("the keyset has no encryption_key") }
        var failure = JOSEError.invalidKey("the keyset's encryption_key is not an unencrypted PEM RSA private key")
        for pem in keys.encryptionKeys {
            guard let key = decryptionKeys.key(pem) else { continue }
            do throws(JOSEError) {
                return String(decoding: try JWE.decrypt(token, key: key).plaintext, as: UTF8.self)
            } catch {
                failure = error
            }
        }
        throw failure
    }

    /// The claims and payload of `token` (once opened, where encrypted): MACed with the client
    /// secret when its header names one of the definition's HMAC algorithms, otherwise signed by
    /// a key from the definition's JWKS.
    private func verified(
        _ token: String, openid: OpenIDDefinition, verifier: JWTVerifier, keys: AppKeys, nonce: String?
    ) async throws(JOSEError) -> (claims: JWTClaims, payload: [UInt8]) {
        let token = try opened(token, openid: openid, keys: keys)
        var verifier = verifier
        let macs = Set(openid.algorithms.compactMap(MACAlgorithm.init(rawValue:)))
        // Only a definition that allows HMAC needs the header read ahead of the verification.
        let isMACed = !macs.isEmpty && JWTVerifier.algorithmName(of: token).flatMap(MACAlgorithm.init(rawValue:)) != nil
        guard let url = openid.jwksURI, !isMACed else {
            // Without a key set only the MAC path is open; it refuses any other alg by name.
            return try verifier.verifiedToken(token, secret: Array(keys.secret.utf8), algorithms: macs, nonce: nonce)
        }
        verifier.algorithms = openid.algorithms.compactMap(SignatureAlgorithm.init(rawValue:))
        return try await verifier.verifiedToken(token, using: cache, url: url, nonce: nonce)
    }
}

extension IDTokenVerifier {
    /// The claims of a signed UserInfo answer (OpenID Connect Core §5.3.2): signed with the
    /// provider's keys, issued by it, for this client; `exp` is checked only if present.
    /// Otherwise a short reason, safe to show (never the token).
    func userInfo(_ body: [UInt8], openid: OpenIDDefinition, audience: String, keys: AppKeys) async -> Result<JSONValue, UserInfoRefusal> {
        // Some providers send the JWT with a trailing newline.
        let token = String(decoding: body, as: UTF8.self).trimmingWhitespace()
        var verifier = JWTVerifier(issuer: openid.issuer, audience: audience)
        verifier.requiresExpiry = false
        do throws(JOSEError) {
            let verified = try await verified(token, openid: openid, verifier: verifier, keys: keys, nonce: nil)
            guard let claims = JSONValue.parse(verified.payload), claims.objectValue != nil else {
                return .failure(UserInfoRefusal(reason: "its claims are not a JSON object"))
            }
            return .success(claims)
        } catch {
            return .failure(UserInfoRefusal(reason: error.reason))
        }
    }
}

/// Why a signed UserInfo answer was not accepted.
struct UserInfoRefusal: Error, Sendable {
    let reason: String
}

/// The JWKS endpoint answered something other than 200.
struct JWKSFetchError: Error {
    let status: Int
}

/// JWKS documents shared between instances as store records (`jwks:<sha-256 of the URL>`,
/// ten minutes). A copy is used only if it is news to this process: when the local cache
/// asks again for a set it already got from the store (expired, or a token names a key it
/// lacks), the provider is asked, so a stale shared copy can never hide a key rotation.
final class SharedJWKS: Sendable {
    static let lifetimeSeconds = 600
    private let store: any Store
    private let served = Mutex<[String: [UInt8]]>([:])

    init(store: any Store) {
        self.store = store
    }

    private static func id(_ url: String) -> String {
        "jwks:" + Hex.encode(Digest.sha256(Array(url.utf8)))
    }

    func copy(_ url: String) async -> [UInt8]? {
        guard let bytes = try? await store.record(Self.id(url)) else { return nil }
        return served.withLock { served in
            if served[url] == bytes { return nil }
            served[url] = bytes
            return bytes
        }
    }

    func publish(_ url: String, _ body: [UInt8]) async {
        served.withLock { $0[url] = body }
        // Replace any older copy; a racing instance's put may win, which is as good.
        _ = try? await store.takeRecord(Self.id(url))
        _ = try? await store.putRecord(Self.id(url), value: body, ttlSeconds: Self.lifetimeSeconds)
    }
}
