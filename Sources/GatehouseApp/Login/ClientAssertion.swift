internal import GatehouseCore
internal import GatehouseCrypto
internal import HTTPClient
internal import JOSE
internal import ProviderEngine
internal import Synchronization

/// `private_key_jwt` and `client_secret_jwt` (RFC 7523 §2.2, OpenID Connect Core §9): the app
/// proves itself at a token endpoint with a JWT signed by its own key, or with HMAC keyed by
/// its secret, so no secret leaves Gatehouse. Each call gets a fresh assertion (a new `jti`),
/// used at once and good for a minute: HelseID allows no more, ID-porten two, and login.gov
/// and NHS login five.
final class ClientAssertionSigner: Sendable {
    static let lifetime: Int64 = 60
    private let keys: PrivateKeyCache

    init(keys: PrivateKeyCache) {
        self.keys = keys
    }

    /// The assertion for `audience` (by default the token endpoint's URL): signed with the
    /// keyset's `private_key`, named by its `key_id`, or with HMAC keyed by its `client_secret`.
    func assertion(
        _ templates: TemplateContext, audience: String, rule: ClientAssertionRule?, withSecret: Bool
    ) throws(ClientAssertionError) -> String {
        let clientID = templates.keysetValue("client_id")
        guard !clientID.isEmpty else { throw ClientAssertionError("the keyset has no client_id") }
        guard let jti = try? SecureRandom.identifier() else { throw ClientAssertionError("no random bytes for the jti") }
        let now = Timestamp.now()
        let claims = JSONValue.object([
            "iss": .string(clientID), "sub": .string(clientID), "aud": .string(rule?.audience.map { Template.render($0, templates) } ?? audience),
            "jti": .string(jti), "iat": .number(Double(now)), "nbf": .number(Double(now)), "exp": .number(Double(now + Self.lifetime)),
        ])
        return try signed(claims, type: "JWT", algorithm: rule?.algorithm, withSecret: withSecret, templates)
    }

    /// `claims` as a compact JWT whose header names `type`: MACed with the keyset's
    /// `client_secret` when `withSecret` (HS256 unless `algorithm` names another HMAC), else
    /// signed with its `private_key`, named by its `key_id`, under `algorithm` or the key's usual one.
    func signed(
        _ claims: JSONValue, type: String, algorithm name: String?, withSecret: Bool, _ templates: TemplateContext
    ) throws(ClientAssertionError) -> String {
        if withSecret {
            let secret = Array(templates.keysetValue("client_secret").utf8)
            guard !secret.isEmpty else { throw ClientAssertionError("the keyset has no client_secret") }
            let algorithm = name.flatMap(MACAlgorithm.init(rawValue:)) ?? .hs256
            let signingInput = PrivateKey.signingInput(header: ["alg": .string(algorithm.rawValue), "typ": .string(type)], claims: claims)
            return signingInput + "." + Base64URL.encode(algorithm.code(key: secret, message: Array(signingInput.utf8)))
        }
        let key = try keys.key(templates.keysetValue("private_key"), parameter: "private_key")
        let algorithm = try Self.algorithm(name, for: key.kind)
        var header: JSONObject = ["alg": .string(algorithm.rawValue), "typ": .string(type)]
        let keyID = templates.keysetValue("key_id")
        if !keyID.isEmpty { header["kid"] = .string(keyID) }
        do {
            return try key.compactJWS(header: header, claims: claims, algorithm: algorithm)
        } catch {
            throw ClientAssertionError("the keyset's private_key cannot sign \(algorithm.rawValue): \(error.reason)")
        }
    }

    /// The definition's algorithm, or the key's usual one: RS256, ES256 or ES384.
    private static func algorithm(_ name: String?, for kind: KeyKind) throws(ClientAssertionError) -> SignatureAlgorithm {
        if let name {
            guard let algorithm = SignatureAlgorithm(rawValue: name), kind.supports(algorithm) else {
                throw ClientAssertionError("a \(kind) private_key cannot sign \(name)")
            }
            return algorithm
        }
        return kind.usualAlgorithm
    }
}

extension PrivateKey {
    /// `header` and `claims` as a compact JWS (RFC 7515 §7.1) signed under `algorithm`.
    func compactJWS(header: JSONObject, claims: JSONValue, algorithm: SignatureAlgorithm) throws(CryptoError) -> String {
        let input = Self.signingInput(header: header, claims: claims)
        return input + "." + Base64URL.encode(try sign(message: Array(input.utf8), algorithm: algorithm))
    }

    /// The first two parts of a compact JWS, which its signature covers.
    static func signingInput(header: JSONObject, claims: JSONValue) -> String {
        Base64URL.encode(JSONValue.object(header).serialized()) + "." + Base64URL.encode(claims.serialized())
    }
}

extension KeyKind {
    /// The JOSE algorithm a key of this kind signs with unless told otherwise.
    var usualAlgorithm: SignatureAlgorithm {
        switch self {
        case .rsa: .rs256
        case .ec(let curve): curve == .p384 ? .es384 : .es256
        }
    }
}

/// Keyset keys parsed once, by PEM text: parsing an RSA key costs far more than using it.
final class PEMKeyCache<Key: Sendable>: Sendable {
    private let keys = Mutex<[String: Key]>([:])
    private let parse: @Sendable (String) -> Key?
    private static var limit: Int { 256 }

    init(parse: @escaping @Sendable (String) -> Key?) {
        self.parse = parse
    }

    /// The key `pem` holds, or nil if it holds none this cache's parser accepts.
    func key(_ pem: String) -> Key? {
        if let key = keys.withLock({ $0[pem] }) { return key }
        // Keys pasted through environment variables often arrive with literal "\n".
        guard let key = parse(pem.contains("\\n") ? pem.replacing("\\n", with: "\n") : pem) else { return nil }
        keys.withLock { cache in
            if cache.count >= Self.limit { cache.removeAll() }
            cache[pem] = key
        }
        return key
    }
}

/// Signing keys from the keyset: `private_key`, `dpop_key`.
final class PrivateKeyCache: Sendable {
    private let keys = PEMKeyCache<PrivateKey> { try? PrivateKey(pem: $0) }

    /// The key in keyset parameter `parameter`, or why it cannot sign (never the key itself).
    func key(_ pem: String, parameter: String) throws(ClientAssertionError) -> PrivateKey {
        guard !pem.isEmpty else { throw ClientAssertionError("the keyset has no \(parameter)") }
        guard let key = keys.key(pem) else {
            throw ClientAssertionError("the keyset's \(parameter) is not an unencrypted PEM RSA or EC private key")
        }
        return key
    }
}

/// Why no assertion could be made; safe to show the app (it names no key material).
struct ClientAssertionError: Error, Sendable {
    let reason: String

    init(_ reason: String) {
        self.reason = reason
    }
}

extension LoginService {
    /// How the app proves itself at the token endpoint at `url`: Basic credentials in a header,
    /// or for `private_key_jwt` and `client_secret_jwt` a fresh assertion among the flow values
    /// the body's template sends.
    /// With `dpop`, a proof for `method` on `url` goes along too, carrying `nonce` when the
    /// provider demanded one.
    func clientAuthentication(
        _ oauth2: OAuth2Definition, url: String, templates: TemplateContext, method: String = "POST", nonce: String? = nil
    ) throws(ClientAssertionError) -> (templates: TemplateContext, headers: [HTTPHeader]) {
        var templates = templates
        var headers: [HTTPHeader] = []
        switch oauth2.clientAuthentication {
        case .body: break
        case .basic: headers.append(Self.basicAuthorization(templates))
        case .privateKeyJWT, .clientSecretJWT:
            templates.flow["client_assertion"] = try assertions.assertion(
                templates, audience: url, rule: oauth2.clientAssertion, withSecret: oauth2.clientAuthentication == .clientSecretJWT)
        }
        if oauth2.dpop {
            let proof = try dpop.proof(templates.keysetValue("dpop_key"), method: method, url: url, accessToken: nil, nonce: nonce)
            headers.append(HTTPHeader(name: "DPoP", value: proof))
        }
        return (templates, headers)
    }

    /// The call to a token, refresh or revoke `endpoint` already rendered as `url`: the app's
    /// authentication, and for a call carrying the user's `token`, the definition's token proof.
    func tokenEndpointRequest(
        _ endpoint: Endpoint, oauth2: OAuth2Definition, url: String, templates: TemplateContext, token: String? = nil, nonce: String? = nil
    ) throws(ClientAssertionError) -> HTTPClientRequest {
        let authenticated = try clientAuthentication(oauth2, url: url, templates: templates, method: endpoint.method, nonce: nonce)
        var request = EndpointRequest.make(endpoint, url: url, context: authenticated.templates, extraHeaders: authenticated.headers)
        if let token { Self.addTokenProof(oauth2, keyset: templates.keyset, token: token, to: &request) }
        return request
    }
}
