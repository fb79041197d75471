public import GatehouseCore
public import JOSE

/// The immutable fields of a definition value, shared by its copies: a copy costs one retain,
/// and a change makes a new box. Two boxes are equal when their fields are.
final class FieldBox<Fields: Sendable & Hashable>: Sendable, Hashable {
    let fields: Fields

    init(_ fields: Fields) {
        self.fields = fields
    }

    /// A box holding these fields with `change` applied.
    func updated(_ change: (inout Fields) -> Void) -> FieldBox {
        var fields = fields
        change(&fields)
        return FieldBox(fields)
    }

    static func == (lhs: FieldBox, rhs: FieldBox) -> Bool {
        lhs === rhs || lhs.fields == rhs.fields
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(fields)
    }
}

/// RFC 7636's `code_challenge_method`. S256 unless the provider accepts nothing else:
/// `plain` puts the verifier itself in the authorization URL (MyAnimeList takes only that).
public enum PKCEMethod: String, Sendable, Hashable {
    case s256 = "S256"
    case plain
}

/// OAuth 1.0a or OAuth 2.
public enum OAuthVersion: String, Sendable, Hashable, Codable {
    case oauth1 = "1"
    case oauth2 = "2"
}

/// The `oauth2` block. Its fields live in one shared, immutable box, as `ProviderDefinition`'s
/// do: every login reads the normalised block, and copying its endpoints and maps one by one
/// cost a retain apiece.
public struct OAuth2Definition: Sendable, Hashable {
    struct Fields: Sendable, Hashable {
        var authorize: Endpoint
        var accessToken: Endpoint
        var request: Endpoint?
        var refresh: Endpoint?
        var revoke: Endpoint?
        var parameters: [String: Parameter]
        var pkce: PKCEMethod?
        var mobileQuery: [String: String]
        var clientAuthentication: ClientAuthentication
        var tokenProof: TokenProof? = nil
        var lookup: LoginLookup? = nil
        var clientAssertion: ClientAssertionRule? = nil
        var pushedAuthorization: Endpoint? = nil
        var requestObject: RequestObjectRule? = nil
        var dpop: Bool = false
        var scopeless: Bool = false
    }

    private var box: FieldBox<Fields>

    public init(
        authorize: Endpoint, accessToken: Endpoint, request: Endpoint?, refresh: Endpoint?, revoke: Endpoint?,
        parameters: [String: Parameter], pkce: PKCEMethod?, mobileQuery: [String: String], clientAuthentication: ClientAuthentication,
        tokenProof: TokenProof? = nil, lookup: LoginLookup? = nil, clientAssertion: ClientAssertionRule? = nil,
        pushedAuthorization: Endpoint? = nil, requestObject: RequestObjectRule? = nil, dpop: Bool = false,
        scopeless: Bool = false
    ) {
        box = FieldBox(Fields(
            authorize: authorize, accessToken: accessToken, request: request, refresh: refresh, revoke: revoke, parameters: parameters,
            pkce: pkce, mobileQuery: mobileQuery, clientAuthentication: clientAuthentication, tokenProof: tokenProof, lookup: lookup,
            clientAssertion: clientAssertion, pushedAuthorization: pushedAuthorization, requestObject: requestObject, dpop: dpop,
            scopeless: scopeless))
    }

    public var authorize: Endpoint {
        get { box.fields.authorize }
        set { box = box.updated { $0.authorize = newValue } }
    }

    public var accessToken: Endpoint {
        get { box.fields.accessToken }
        set { box = box.updated { $0.accessToken = newValue } }
    }

    public var request: Endpoint? {
        get { box.fields.request }
        set { box = box.updated { $0.request = newValue } }
    }

    public var refresh: Endpoint? {
        get { box.fields.refresh }
        set { box = box.updated { $0.refresh = newValue } }
    }

    public var revoke: Endpoint? {
        get { box.fields.revoke }
        set { box = box.updated { $0.revoke = newValue } }
    }

    public var parameters: [String: Parameter] {
        get { box.fields.parameters }
        set { box = box.updated { $0.parameters = newValue } }
    }

    /// Send a PKCE challenge and verifier, and how the challenge is derived (nil: no PKCE).
    public var pkce: PKCEMethod? {
        get { box.fields.pkce }
        set { box = box.updated { $0.pkce = newValue } }
    }

    /// Extra authorize query used when a mobile SDK starts the flow (`mobile=true`).
    public var mobileQuery: [String: String] {
        get { box.fields.mobileQuery }
        set { box = box.updated { $0.mobileQuery = newValue } }
    }

    /// How the client authenticates at the token endpoint: in the form body or HTTP Basic.
    public var clientAuthentication: ClientAuthentication {
        get { box.fields.clientAuthentication }
        set { box = box.updated { $0.clientAuthentication = newValue } }
    }

    /// A proof of the app secret sent beside the token on API calls (Facebook's `appsecret_proof`).
    public var tokenProof: TokenProof? {
        get { box.fields.tokenProof }
        set { box = box.updated { $0.tokenProof = newValue } }
    }

    /// A call made with the new token right after the code exchange, for what the token
    /// answer lacks (Mailchimp's data centre, DocuSign's account host).
    public var lookup: LoginLookup? {
        get { box.fields.lookup }
        set { box = box.updated { $0.lookup = newValue } }
    }

    /// For `private_key_jwt`: who the assertion is for and how it is signed, where the
    /// provider wants other than the token endpoint's URL and the key's usual algorithm.
    public var clientAssertion: ClientAssertionRule? {
        get { box.fields.clientAssertion }
        set { box = box.updated { $0.clientAssertion = newValue } }
    }

    /// RFC 9126's pushed authorization request endpoint: the authorize parameters go there
    /// first, with the app's client authentication, and the browser carries only a reference.
    public var pushedAuthorization: Endpoint? {
        get { box.fields.pushedAuthorization }
        set { box = box.updated { $0.pushedAuthorization = newValue } }
    }

    /// RFC 9101: the authorize parameters travel as a signed JWT (`request`), so the browser
    /// can neither read nor alter them.
    public var requestObject: RequestObjectRule? {
        get { box.fields.requestObject }
        set { box = box.updated { $0.requestObject = newValue } }
    }

    /// RFC 9449: token and API calls carry a proof signed with the keyset's `dpop_key`, so the
    /// provider can bind its tokens to that key.
    public var dpop: Bool {
        get { box.fields.dpop }
        set { box = box.updated { $0.dpop = newValue } }
    }

    /// The provider signs a user in without any scope (its permissions are set on the app at
    /// the provider, or it has none), so a keyset may leave `scope` out.
    public var scopeless: Bool {
        get { box.fields.scopeless }
        set { box = box.updated { $0.scopeless = newValue } }
    }
}

/// `client_assertion`: RFC 7523's `aud` and `alg` for a provider that does not take the token
/// endpoint's URL and the usual algorithm (the key's RS256, ES256 or ES384; HS256 for a secret).
public struct ClientAssertionRule: Sendable, Hashable {
    /// A template, rendered like an endpoint's query values (`{issuer}`, `https://x/token`).
    public var audience: String?
    /// A JOSE name: RS256, RS384, RS512, PS256, PS384, PS512, ES256 or ES384 for a key;
    /// HS256, HS384 or HS512 for a secret.
    public var algorithm: String?
}

/// `request_object`: how the authorize parameters are packed into a signed JWT (RFC 9101).
public struct RequestObjectRule: Sendable, Hashable {
    /// A JOSE name: HS256, HS384 or HS512 MAC with the keyset's `client_secret`; any other
    /// signs with its `private_key` (by default that key's usual algorithm).
    public var algorithm: String?
    /// The `aud` template; by default the `openid` issuer.
    public var audience: String?
    /// The authorize parameters also left in the URL beside `request`.
    public var query: [String]
    /// Claims added to the authorize parameters, JSON as written (string values are templates):
    /// where a provider wants a boolean or a number, which the query cannot carry.
    public var claims: JSONObject
    /// Set for a provider that takes its request objects only encrypted to the key it publishes
    /// (RFC 9101 §6.1): the signed object becomes the content of a JWE.
    public var encryption: RequestObjectEncryption?

    public static let defaultQuery = ["client_id", "response_type", "scope"]

    public init(
        algorithm: String? = nil, audience: String? = nil, query: [String] = defaultQuery, claims: JSONObject = [:],
        encryption: RequestObjectEncryption? = nil
    ) {
        self.algorithm = algorithm
        self.audience = audience
        self.query = query
        self.claims = claims
        self.encryption = encryption
    }
}

/// `request_object.encryption`: how the key is transported and the content encrypted.
public struct RequestObjectEncryption: Sendable, Hashable {
    public var keyAlgorithm: JWE.KeyAlgorithm
    public var contentAlgorithm: JWE.ContentAlgorithm

    public init(keyAlgorithm: JWE.KeyAlgorithm = .rsaOAEP256, contentAlgorithm: JWE.ContentAlgorithm = .a256GCM) {
        self.keyAlgorithm = keyAlgorithm
        self.contentAlgorithm = contentAlgorithm
    }
}

/// `lookup`: one call with the fresh access token (`{{token}}`) whose `export`s join the login
/// result beside the token fields, so the SDKs get them and, when `request` names them, send
/// them back. The answer is JSON; a lookup that fails fails the login unless it is `optional`.
public struct LoginLookup: Sendable, Hashable {
    public var endpoint: Endpoint
    /// Result field name → expression over the answer (the profile mapping's language).
    public var export: [String: ProfileExpression]
    public var optional: Bool

    public init(endpoint: Endpoint, export: [String: ProfileExpression], optional: Bool = false) {
        self.endpoint = endpoint
        self.export = export
        self.optional = optional
    }
}

/// `token_proof`: when the keyset parameter `enabledBy` is true, every call that carries the
/// user's token (proxy, `me`, refresh, revoke) also carries the query parameter `name` set to
/// the hex HMAC-SHA256 of the token keyed with the app's `client_secret`.
public struct TokenProof: Sendable, Hashable {
    public var name: String
    public var enabledBy: String

    public init(name: String, enabledBy: String) {
        self.name = name
        self.enabledBy = enabledBy
    }

    /// Whether the app's keyset switches the proof on (`true` or `"true"`).
    public func isEnabled(_ keyset: JSONObject) -> Bool {
        switch keyset[enabledBy] {
        case .bool(true)?: return true
        case .string(let text)?: return ["true", "1", "yes"].contains(text.lowercased())
        default: return false
        }
    }
}

/// The `oauth1` block.
public struct OAuth1Definition: Sendable, Hashable {
    public var requestToken: Endpoint
    public var authorize: Endpoint
    public var accessToken: Endpoint
    public var request: Endpoint?
    public var parameters: [String: Parameter]
    /// Some providers (TripIt, Xero) send no verifier back.
    public var ignoreVerifier: Bool
    /// False where API calls carry no OAuth 1.0a signature, the `request` block's query and
    /// headers alone authorising them (Zotero wants the token secret as an API key header).
    public var signsRequests: Bool = true
}

/// The `openid` block: how to verify the provider's id_token. `issuer` and `jwksURI` may hold
/// `{x}` keyset values: a provider hosted per tenant (Okta, Auth0, Keycloak) issues its tokens
/// under the app's own domain.
public struct OpenIDDefinition: Sendable, Hashable {
    public var issuer: String
    /// Absent only when every algorithm is an HMAC one, keyed by the client secret.
    public var jwksURI: String?
    public var algorithms: [String]
    /// id_tokens and signed UserInfo answers arrive encrypted (JWE) to the keyset's `encryption_key`.
    public var encrypted = false

    /// The HMAC algorithms (OpenID Connect Core §10.1), as distinct from signatures by a key in the JWKS.
    public static let macAlgorithms = Set(MACAlgorithm.allCases.map(\.rawValue))

    /// The block with the keyset's values in place, as an app's logins see it.
    public func rendered(_ context: TemplateContext) -> OpenIDDefinition {
        var copy = self
        copy.issuer = Template.render(issuer, context)
        copy.jwksURI = jwksURI.map { Template.renderURL($0, context) }
        return copy
    }
}

/// Where the token endpoint expects the client credentials.
public enum ClientAuthentication: String, Sendable, Hashable {
    /// `client_id` and `client_secret` in the form body (RFC 6749 §2.3.1, second form).
    case body
    /// `Authorization: Basic` with the form-encoded id and secret (RFC 6749 §2.3.1).
    case basic
    /// A JWT signed with the app's own key (RFC 7523 §2.2, OpenID Connect Core §9): no shared
    /// secret leaves Gatehouse. The keyset holds `private_key` (PEM) and optionally `key_id`.
    case privateKeyJWT = "private_key_jwt"
    /// A JWT signed with HMAC keyed by `client_secret` (OpenID Connect Core §9): the secret
    /// proves itself without being sent.
    case clientSecretJWT = "client_secret_jwt"
}

/// One endpoint: a URL plus templated query (or form body for POST) and headers.
public struct Endpoint: Sendable, Hashable {
    public var url: String
    public var method: String
    /// Templates; for POST endpoints these form the body.
    public var query: [String: String]?
    public var headers: [String: String]?
    /// `json`, `url` (form-encoded) or a MIME type: what the response is parsed as.
    public var format: String?
    /// Response (or callback) fields copied into the login result.
    public var extra: [String]
    /// The provider allows browsers to call this API directly (`request` only).
    public var cors: Bool
    /// How a POST/PUT/PATCH sends `query`: a form (OAuth's default) or a JSON object of strings.
    public var body: BodyEncoding
    /// Where in a JSON answer the token fields are, for providers that wrap them
    /// (`data` for `{"data": {"access_token": ...}}`); nil for the answer itself.
    public var answer: ProfilePath?
    /// The provider's names for OAuth's token fields (`access_token` → `accessToken`), for an
    /// answer that does not use RFC 6749's.
    public var names: [String: String]
    /// Where a `request` URL whose origin is a flow value may go (`APIHost`); empty otherwise.
    public var hosts: [APIHost]
    /// Text the provider puts before its JSON answer (Xiaomi's `&&&START&&&`), dropped before parsing.
    public var prefix: String?
    /// Result fields taken from anywhere in a token answer (Teamwork's `installation.apiEndPoint`),
    /// where `extra` copies top-level fields only. OAuth 2 `access_token` only.
    public var export: [String: ProfileExpression] = [:]

    public enum BodyEncoding: String, Sendable, Hashable {
        case form, json
    }

    public init(
        url: String, method: String = "GET", query: [String: String]? = nil, headers: [String: String]? = nil,
        format: String? = nil, extra: [String] = [], cors: Bool = false, body: BodyEncoding = .form, answer: ProfilePath? = nil,
        names: [String: String] = [:], hosts: [APIHost] = [], prefix: String? = nil
    ) {
        self.url = url
        self.method = method
        self.query = query
        self.headers = headers
        self.format = format
        self.extra = extra
        self.cors = cors
        self.body = body
        self.answer = answer
        self.names = names
        self.hosts = hosts
        self.prefix = prefix
    }
}

/// A keyset parameter the provider needs from each app (client id, secret, scope, ...).
public struct Parameter: Sendable, Hashable {
    /// Whether a parameter's name says it holds a secret (`client_secret`, `private_key`,
    /// `password`, `api_key`): masked when keysets are shown, and never allowed where its value
    /// could end up in an error message, such as an issuer.
    public static func namesSecret(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered != "client_id" && ["secret", "private", "password", "key"].contains { lowered.contains($0) }
    }

    /// Allowed values with their descriptions, for scopes.
    public var values: [String: String]?
    /// How list values are joined in a URL; space by default for lists.
    public var separator: String
    /// `1` for single-valued, `*` for lists.
    public var cardinality: String
    /// A public parameter is echoed to the front end in the login result.
    public var isPublic: Bool
    /// Used when the keyset has no value (e.g. Facebook's Graph API version).
    public var defaultValue: String?

    public init(
        values: [String: String]? = nil, separator: String = " ", cardinality: String = "1", isPublic: Bool = false, defaultValue: String? = nil
    ) {
        self.values = values
        self.separator = separator
        self.cardinality = cardinality
        self.isPublic = isPublic
        self.defaultValue = defaultValue
    }
}
