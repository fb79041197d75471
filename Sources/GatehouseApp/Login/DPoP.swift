internal import GatehouseCore
internal import GatehouseCrypto
internal import HTTPClient
internal import JOSE

/// RFC 9449 proofs of possession. Each call to the token endpoint and each API call carries a
/// fresh JWT signed with the keyset's `dpop_key`, naming the method and URL (and, on API calls,
/// a hash of the token), so a token the provider bound to that key is worthless to anyone who
/// lacks it, Gatehouse's callers included.
final class DPoPSigner: Sendable {
    private let keys: PrivateKeyCache

    init(keys: PrivateKeyCache) {
        self.keys = keys
    }

    /// A proof for `method` on `url` (its query and fragment are not part of it), for
    /// `accessToken` when calling an API, carrying the provider's `nonce` when it asked for one.
    func proof(_ pem: String, method: String, url: String, accessToken: String?, nonce: String?) throws(ClientAssertionError) -> String {
        let key = try keys.key(pem, parameter: "dpop_key")
        let algorithm = key.kind.usualAlgorithm
        let jwk: JSONValue
        do { jwk = .object(try key.publicKey.jwkMembers()) } catch {
            throw ClientAssertionError("the keyset's dpop_key has no usable public key: \(error.reason)")
        }
        guard let jti = try? SecureRandom.identifier() else { throw ClientAssertionError("no random bytes for the jti") }
        let target = url.prefix { $0 != "?" && $0 != "#" }
        var claims: JSONObject = [
            "jti": .string(jti), "htm": .string(method.uppercased()), "htu": .string(String(target)), "iat": .number(Double(Timestamp.now())),
        ]
        if let accessToken { claims["ath"] = .string(Base64URL.encode(Digest.sha256(Array(accessToken.utf8)))) }
        if let nonce { claims["nonce"] = .string(nonce) }
        let header: JSONObject = ["typ": "dpop+jwt", "alg": .string(algorithm.rawValue), "jwk": jwk]
        do {
            return try key.compactJWS(header: header, claims: .object(claims), algorithm: algorithm)
        } catch {
            throw ClientAssertionError("the keyset's dpop_key cannot sign \(algorithm.rawValue): \(error.reason)")
        }
    }

    /// The nonce a provider demands before it takes a proof (`use_dpop_nonce`, RFC 9449 §8),
    /// if `response` is that demand.
    static func demandedNonce(_ response: HTTPClientResponse) -> String? {
        guard response.status == 400 || response.status == 401, let nonce = response.header("dpop-nonce"), !nonce.isEmpty else { return nil }
        let body = String(decoding: response.body, as: UTF8.self)
        let challenge = response.header("www-authenticate") ?? ""
        return body.contains("use_dpop_nonce") || challenge.contains("use_dpop_nonce") ? nonce : nil
    }
}
