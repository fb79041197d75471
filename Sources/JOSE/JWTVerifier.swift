public import GatehouseCore
public import GatehouseCrypto

/// Verifies compact JWTs such as OpenID Connect id_tokens: signature first, then issuer,
/// audience, validity window and nonce.
public struct JWTVerifier: Sendable {
    /// The exact `iss` required.
    public var issuer: String
    /// The accepted audiences (client ids); `aud` must contain at least one. A gateway serving
    /// native and web sign-in accepts each bundle id and the web client id. An array: there are
    /// a handful, and a verifier is built per sign-in, where building a set cost more than the
    /// linear searches it saves.
    public var audiences: [String]
    /// The algorithms accepted in the header; everything else is refused before any key is used.
    public var algorithms: [SignatureAlgorithm]
    /// Seconds of clock skew tolerated for `exp`, `nbf` and `iat`.
    public var leeway: Int64
    /// Identity tokens name a user in `sub`; event tokens (Apple's notifications) carry the
    /// user elsewhere and have none.
    public var requiresSubject = true
    /// Identity tokens must expire; a signed UserInfo answer need not carry `exp`, and where
    /// it does, it is checked.
    public var requiresExpiry = true
    /// Apple names the signing key in every token it issues (apple.md §2); a token without a
    /// `kid` is refused rather than tried against each published key.
    public var requiresKeyID = false
    /// The longest token accepted, in bytes.
    public var maximumTokenLength: Int
    private let now: @Sendable () -> Int64

    /// A verifier for tokens from `issuer` meant for `audience`. `now` returns the current
    /// time in seconds since the epoch; tests inject a fixed clock.
    public init(
        issuer: String,
        audience: String,
        algorithms: [SignatureAlgorithm] = [.rs256],
        leeway: Int64 = 60,
        maximumTokenLength: Int = JWS.defaultMaximumLength,
        now: @escaping @Sendable () -> Int64 = { Timestamp.now() }
    ) {
        self.init(
            issuer: issuer, audiences: [audience], algorithms: algorithms, leeway: leeway, maximumTokenLength: maximumTokenLength, now: now)
    }

    /// A verifier accepting any of several audiences.
    public init(
        issuer: String,
        audiences: [String],
        algorithms: [SignatureAlgorithm] = [.rs256],
        leeway: Int64 = 60,
        maximumTokenLength: Int = JWS.defaultMaximumLength,
        now: @escaping @Sendable () -> Int64 = { Timestamp.now() }
    ) {
        self.issuer = issuer
        self.audiences = audiences
        self.algorithms = algorithms
        self.leeway = max(0, leeway)
        self.maximumTokenLength = maximumTokenLength
        self.now = now
    }

    /// Verifies `token` against `keys` and returns its claims. When `nonce` is given, the
    /// token's `nonce` claim must equal it.
    public func verify(_ token: String, keys: KeySet, nonce: String? = nil) throws(JOSEError) -> JWTClaims {
        let jws = try JWS(compact: token, allowedAlgorithms: algorithms, maximumLength: maximumTokenLength)
        return try verify(jws, keys: keys, nonce: nonce)
    }

    /// Verifies an already parsed token, as `verify(_:keys:nonce:)` does.
    public func verify(_ jws: JWS, keys: KeySet, nonce: String? = nil) throws(JOSEError) -> JWTClaims {
        try checkHeader(jws)
        var candidates = 0
        var verified = false
        // With a kid only that key is tried; without one, every key that fits the algorithm
        // (a provider publishing a single key often omits kid).
        for key in keys.keys where key.matches(kid: jws.header.kid, algorithm: jws.header.alg) {
            candidates += 1
            if jws.isSignatureValid(with: key.publicKey) {
                verified = true
                break
            }
        }
        guard candidates > 0 else {
            let kid = jws.header.kid.map { " with kid \(JOSEError.printable($0))" } ?? ""
            throw .unknownKey("the signing key is unknown: the set has no \(jws.header.alg.rawValue) key\(kid)")
        }
        guard verified else { throw .badSignature("the signature does not verify") }
        let claims = try JWTClaims(payload: jws.payload)
        try validate(claims, nonce: nonce)
        return claims
    }

    /// Refuses a header this verifier does not accept before any key is looked up or fetched.
    func checkHeader(_ jws: JWS) throws(JOSEError) {
        guard algorithms.contains(jws.header.alg) else {
            throw .unsupportedAlgorithm("alg \(jws.header.alg.rawValue) is not allowed here")
        }
        if requiresKeyID, (jws.header.kid ?? "").isEmpty { throw .malformed("the token names no kid") }
    }

    /// Checks the claims of a token whose signature has been verified.
    func validate(_ claims: JWTClaims, nonce: String?) throws(JOSEError) {
        guard let iss = claims.iss else { throw .claimMismatch("iss", "the token has no iss") }
        guard iss == issuer else { throw .claimMismatch("iss", "the token was not issued by \(issuer)") }
        guard claims.aud.contains(where: audiences.contains) else {
            let expected = Set(audiences).sorted().joined(separator: " or ")
            throw .claimMismatch("aud", "the token's audience (aud) is not \(expected)")
        }
        if requiresSubject, (claims.sub ?? "").isEmpty { throw .claimMismatch("sub", "the token has no subject") }
        let current = now()
        if let exp = claims.exp {
            guard exp > current - leeway else { throw .expired("the token expired \(current - exp) s ago") }
        } else if requiresExpiry {
            throw .claimMismatch("exp", "the token has no exp")
        }
        if let nbf = claims.nbf, nbf > current + leeway {
            throw .notYetValid("the token is not valid for another \(nbf - current) s")
        }
        if let iat = claims.iat, iat > current + leeway {
            throw .notYetValid("the token claims to be issued \(iat - current) s in the future")
        }
        if let nonce {
            guard let tokenNonce = claims.nonce else { throw .claimMismatch("nonce", "the token has no nonce") }
            guard ConstantTime.equals(tokenNonce, nonce) else {
                throw .claimMismatch("nonce", "the token's nonce is not the one sent with the request")
            }
        }
    }
}
