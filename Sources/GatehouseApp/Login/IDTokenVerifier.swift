internal import GatehouseCore
internal import GatehouseCrypto
internal import HTTPClient
internal import JOSE
internal import ProviderEngine

/// Verifies OpenID Connect id_tokens against the provider's JWKS, fetched through the
/// gateway's HTTP client and cached per key id by JOSE's `JWKSCache`, which also limits how
/// often an unknown `kid` can make us refetch.
struct IDTokenVerifier: Sendable {
    let cache: JWKSCache

    init(outbound: HTTPClient) {
        cache = JWKSCache(fetcher: { url in
            let response = try await outbound.execute(HTTPClientRequest(method: "GET", url: url, timeout: .seconds(10)))
            guard response.status == 200 else { throw JWKSFetchError(status: response.status) }
            return response.body
        })
    }

    /// nil when the token is valid; otherwise a short reason, safe to show (never the token).
    func verify(_ token: String, openid: OpenIDDefinition, audience: String, nonce: String?) async -> String? {
        let verifier = JWTVerifier(
            issuer: openid.issuer, audience: audience, algorithms: openid.algorithms.compactMap { SignatureAlgorithm(rawValue: $0) })
        do throws(JOSEError) {
            _ = try await verifier.verify(token, using: cache, url: openid.jwksURI, nonce: nonce)
            return nil
        } catch {
            return error.reason
        }
    }
}

/// The JWKS endpoint answered something other than 200.
struct JWKSFetchError: Error {
    let status: Int
}
