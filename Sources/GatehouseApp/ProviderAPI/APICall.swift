internal import GatehouseCore
internal import GatehouseCrypto
internal import HTTPClient
internal import HTTPServer
internal import ProviderEngine

/// What an authorised call to a provider's API needs: the provider, the app's keyset and
/// the user's credentials from the `oauthio` header.
struct APICaller: Sendable {
    let definition: ProviderDefinition
    let keyset: JSONObject
    let header: OAuthioHeader
    /// The normalised `request` block for the caller's OAuth version.
    let requestEndpoint: Endpoint?
    /// Keyset and flow values for the templates, built once per call: every `oauthio` field,
    /// the token under `token`, and `today`.
    let templates: TemplateContext
    /// Signs the proof each call carries when the provider binds tokens to the keyset's key.
    let dpop: DPoPSigner

    init(definition: ProviderDefinition, keyset: JSONObject, header: OAuthioHeader, dpop: DPoPSigner) {
        self.definition = definition
        self.keyset = keyset
        self.header = header
        self.dpop = dpop
        let oauth1 = header.version == .oauth1
        requestEndpoint = oauth1 ? definition.normalisedOAuth1?.request : definition.normalisedOAuth2?.request
        var flow = header.fields
        if let token = header.token { flow["token"] = token }
        flow["token_secret"] = header.tokenSecret
        flow["today"] = Self.today()
        let parameters = (oauth1 ? definition.normalisedOAuth1?.parameters : definition.normalisedOAuth2?.parameters) ?? [:]
        templates = TemplateContext(keyset: keyset, parameters: parameters, flow: flow)
    }

    /// The provider's API base, rendered (`https://graph.facebook.com/v19.0`).
    func base() -> Result<String, Refusal> {
        guard let endpoint = requestEndpoint else {
            return .failure(Refusal(JSend.error(400, "\(definition.id) has no API to call")))
        }
        return url(endpoint.url, templates)
    }

    /// An API URL template rendered with `context`. Where the login named the API's host
    /// (`{{instance_url}}`), the caller must send it back and it must be one the definition lists.
    func url(_ template: String, _ context: TemplateContext) -> Result<String, Refusal> {
        switch Template.renderAPIURL(template, context, hosts: requestEndpoint?.hosts ?? []) {
        case .url(let url):
            return .success(url)
        case .missing(let field):
            return .failure(Refusal(JSend.error(400, "You must provide '\(field)' in the 'oauthio' http header")))
        case .notAdmitted(let fields):
            return .failure(Refusal(JSend.error(400, EndpointRequest.hostRefusal(fields, provider: definition.id, hosts: "API hosts"))))
        }
    }

    /// Builds the upstream request: the caller's headers minus the forbidden ones, then the
    /// definition's query and headers (which win), the token proof, and for OAuth 1 (unless the
    /// definition's `sign_requests` is false) the HMAC-SHA1 signature over method, URL, query
    /// and form body.
    func request(method: String, url: String, headers incoming: [HTTPHeader], body: [UInt8]?, timeout: Duration)
        -> Result<HTTPClientRequest, Refusal>
    {
        var headers = incoming
        var url = url
        let context = templates
        if let endpoint = requestEndpoint {
            let pairs = Template.renderValues(endpoint.query, context).map {
                PercentEncoding.encode($0.name) + "=" + PercentEncoding.encode($0.value)
            }
            if !pairs.isEmpty { url += (url.utf8.contains(UInt8(ascii: "?")) ? "&" : "?") + pairs.joined(separator: "&") }
            for (name, template) in (endpoint.headers ?? [:]).sorted(by: { $0.key < $1.key }) {
                let value = Template.render(template, context)
                headers.removeAll { $0.name.lowercased() == name.lowercased() }
                if !value.isEmpty { headers.append(HTTPHeader(name: name, value: value)) }
            }
        }
        if let proof = proofParameter() {
            url += (url.utf8.contains(UInt8(ascii: "?")) ? "&" : "?") + proof
        }
        if header.version == .oauth2, definition.normalisedOAuth2?.dpop == true {
            headers.removeAll { $0.hasName("dpop") }
            do throws(ClientAssertionError) {
                let proof = try dpop.proof(context.keysetValue("dpop_key"), method: method, url: url, accessToken: header.token, nonce: nil)
                headers.append(HTTPHeader(name: "DPoP", value: proof))
            } catch {
                return .failure(Refusal(JSend.error(400, "Cannot prove possession of the token: \(error.reason)")))
            }
        }
        if header.version == .oauth1 {
            guard let token = header.token else { return .failure(Refusal(JSend.error(400, "You must provide a 'token' in 'oauthio' http header"))) }
            guard definition.normalisedOAuth1?.signsRequests ?? true else {
                return checked(method: method, url: url, headers: headers, body: body, timeout: timeout)
            }
            let signer = OAuth1Signer(
                consumerKey: context.keysetValue("client_id"), consumerSecret: context.keysetValue("client_secret"), token: token,
                tokenSecret: header.tokenSecret)
            var signed: [FormField] = []
            let contentType = headers.first { $0.hasName("content-type") }?.value.lowercased() ?? ""
            if let body, contentType.hasPrefix("application/x-www-form-urlencoded") {
                signed = FormField.parse(bytes: body) ?? []
            }
            guard let nonce = try? SecureRandom.identifier() else { return .failure(Refusal(JSend.error(500, "Internal error"))) }
            headers.removeAll { $0.hasName("authorization") }
            headers.append(HTTPHeader(
                name: "Authorization",
                value: signer.authorization(method: method, url: url, parameters: signed, nonce: nonce, timestamp: Timestamp.now())))
        }
        return checked(method: method, url: url, headers: headers, body: body, timeout: timeout)
    }

    /// The request, unless a control character in its URL or headers could split it upstream.
    private func checked(method: String, url: String, headers: [HTTPHeader], body: [UInt8]?, timeout: Duration)
        -> Result<HTTPClientRequest, Refusal>
    {
        guard !ForwardingRules.hasControlCharacters(url),
            headers.allSatisfy({ !ForwardingRules.hasControlCharacters($0.name) && !ForwardingRules.hasControlCharacters($0.value) })
        else { return .failure(Refusal(JSend.error(400, "A forwarded value contains control characters"))) }
        return .success(HTTPClientRequest(method: method, url: url, headers: headers, body: body, timeout: timeout))
    }

    /// `name=<hex HMAC-SHA256(client_secret, token)>` when the definition has a token proof
    /// and the app's keyset switches it on.
    func proofParameter() -> String? {
        guard let proof = definition.normalisedOAuth2?.tokenProof, proof.isEnabled(keyset), let token = header.token else { return nil }
        return Self.proof(proof, keyset: keyset, token: token)
    }

    static func proof(_ proof: TokenProof, keyset: JSONObject, token: String) -> String {
        let secret = keyset["client_secret"]?.stringValue ?? ""
        let mac = HMAC.sha256(key: Array(secret.utf8), message: Array(token.utf8))
        return PercentEncoding.encode(proof.name) + "=" + Hex.encode(mac)
    }

    /// `YYYYMMDD` in UTC, for APIs that version requests by date (Foursquare's `v`).
    static func today() -> String {
        CivilTime(milliseconds: Timestamp.nowMilliseconds()).compactDate
    }
}

/// A provider's answer is served from the gateway's origin, where the gateway's pages and
/// cookies live: an HTML or SVG body must neither be sniffed into markup nor run script there.
enum ProxiedBody {
    /// The answer with `nosniff` and a `sandbox` policy (an opaque origin, no scripts), in place
    /// of any the provider sent.
    static func confined(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.set("X-Content-Type-Options", "nosniff")
        response.headers.set("Content-Security-Policy", "sandbox")
        return response
    }
}

/// CORS as oauthd's `/request` and `me` answer it (oauthd-protocol.md §0): the caller's
/// origin echoed (Referer, then Origin, then `http://localhost`).
enum EchoCORS {
    static func origin(_ request: HTTPRequest) -> String {
        for candidate in [request.headers["referer"], request.headers["origin"]] {
            if let text = candidate, let url = WebURL(text), url.scheme == "http" || url.scheme == "https" { return url.origin }
        }
        return "http://localhost"
    }

    static func apply(_ response: HTTPResponse, origin: String) -> HTTPResponse {
        var response = response
        response.headers.set("Access-Control-Allow-Origin", origin)
        response.headers.set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE")
        response.headers.set("Vary", "Origin")
        return response
    }

    /// The answer to an OPTIONS preflight: requested headers echoed, cached 120 s.
    static func preflight(_ request: HTTPRequest) -> HTTPResponse {
        var response = apply(.empty(200), origin: origin(request))
        let requested = request.headers["access-control-request-headers"] ?? ""
        if !requested.isEmpty, !ForwardingRules.hasControlCharacters(requested) {
            response.headers.set("Access-Control-Allow-Headers", requested)
        }
        response.headers.set("Access-Control-Max-Age", "120")
        return response
    }
}
