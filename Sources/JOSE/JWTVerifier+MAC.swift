internal import GatehouseCrypto

/// The HMAC algorithms of RFC 7518 §3.2. OpenID Connect lets a provider sign id_tokens with
/// the client secret (Core §10.1); such a token is checked with that secret and nothing else,
/// so a key from a JWKS can never serve as an HMAC key.
public enum MACAlgorithm: String, Sendable, Hashable, CaseIterable {
    case hs256 = "HS256"
    case hs384 = "HS384"
    case hs512 = "HS512"

    /// The MAC of `message` under `key`.
    public func code(key: [UInt8], message: [UInt8]) -> [UInt8] {
        switch self {
        case .hs256: HMAC.sha256(key: key, message: message)
        case .hs384: HMAC.sha384(key: key, message: message)
        case .hs512: HMAC.sha512(key: key, message: message)
        }
    }
}

extension JWTVerifier {
    /// Verifies a token MACed with `secret` under one of `algorithms`, then its claims as
    /// `verify(_:keys:nonce:)` does, and returns them with the payload's bytes.
    public func verifiedToken(
        _ token: String, secret: [UInt8], algorithms: Set<MACAlgorithm>, nonce: String? = nil
    ) throws(JOSEError) -> (claims: JWTClaims, payload: [UInt8]) {
        let parts = try JWS.macParts(of: token, maximumLength: maximumTokenLength)
        guard let algorithm = MACAlgorithm(rawValue: parts.alg), algorithms.contains(algorithm) else {
            throw .unsupportedAlgorithm("alg \(JOSEError.printable(parts.alg)) is not allowed here")
        }
        // An empty secret would make every MAC forgeable by anyone.
        guard !secret.isEmpty else { throw .unknownKey("no client secret to check an \(algorithm.rawValue) token with") }
        guard ConstantTime.equals(algorithm.code(key: secret, message: parts.signingInput), parts.signature) else {
            throw .badSignature("the signature does not verify")
        }
        let claims = try JWTClaims(payload: parts.payload)
        try validate(claims, nonce: nonce)
        return (claims, parts.payload)
    }

    /// The `alg` a token's header names, read without verifying anything, so a caller can tell
    /// a MACed token from a signed one; nil if the token is malformed (verification says why).
    public static func algorithmName(of token: String) -> String? {
        try? JWS.macParts(of: token, maximumLength: JWS.defaultMaximumLength).alg
    }
}
