extension JWTVerifier {
    /// Verifies `token` with keys from `cache` for the JWKS at `url`, which refetches the set
    /// (within its rate limit) when the token names a key it does not hold yet.
    public func verify(_ token: String, using cache: JWKSCache, url: String, nonce: String? = nil) async throws(JOSEError) -> JWTClaims {
        try await verifiedToken(token, using: cache, url: url, nonce: nonce).claims
    }

    /// As `verify(_:using:url:nonce:)`, with the payload's bytes beside the claims, for a
    /// caller that reads more of it than `JWTClaims` holds (a signed UserInfo answer).
    public func verifiedToken(
        _ token: String, using cache: JWKSCache, url: String, nonce: String? = nil
    ) async throws(JOSEError) -> (claims: JWTClaims, payload: [UInt8]) {
        let jws = try JWS(compact: token, allowedAlgorithms: algorithms, maximumLength: maximumTokenLength)
        try checkHeader(jws)
        let keys: KeySet
        if let fresh = cache.freshKeys(for: url, kid: jws.header.kid) {
            keys = fresh
        } else {
            keys = try await cache.keys(for: url, kid: jws.header.kid)
        }
        return (try verify(jws, keys: keys, nonce: nonce), jws.payload)
    }
}
