internal import GatehouseCore
internal import GatehouseCrypto
internal import HTTPClient
internal import HTTPServer
internal import ProviderEngine

/// The OAuth.io login protocol: start (`GET /auth/:provider`), provider callback
/// (`GET|POST /auth`), code redemption and refresh. See oauthd-protocol.md §1–§2.
struct LoginService: Sendable {
    let context: GatewayContext
    let outbound: HTTPClient
    let verifier: IDTokenVerifier
    let apple: AppleSignIn
    /// The keysets' private keys, parsed once for every use: assertions, request objects, DPoP
    /// proofs and the public halves `publicKeys` publishes.
    let keys: PrivateKeyCache
    /// Signs `private_key_jwt` assertions and request objects.
    let assertions: ClientAssertionSigner
    /// Signs DPoP proofs with each keyset's `dpop_key`.
    let dpop: DPoPSigner
    /// Login starts the store could not take: while it is down that is every one of them.
    let unstoredStates = LogThrottle()

    init(context: GatewayContext, outbound: HTTPClient, verifier: IDTokenVerifier, apple: AppleSignIn) {
        self.context = context
        self.outbound = outbound
        self.verifier = verifier
        self.apple = apple
        keys = PrivateKeyCache()
        assertions = ClientAssertionSigner(keys: keys)
        dpop = DPoPSigner(keys: keys)
    }

    var callbackURL: String { context.configuration.publicURL + "/auth" }

    /// The callback the provider is given. OAuth 1 providers, and OAuth 2 ones whose
    /// authorize step sends no state, get the state in the callback URL itself; start and
    /// callback must build the same URL, since the token endpoint compares them.
    func callback(for definition: ProviderDefinition, version: OAuthVersion, stateID: String) -> String {
        definition.callbackCarriesState || version == .oauth1 ? callbackURL + "?state=" + stateID : callbackURL
    }

    // MARK: Start

    func start(_ request: HTTPRequest) async -> HTTPResponse {
        let providerID = request.parameter("provider").lowercased()
        let fields = RequestFields(request)
        let redirectText = fields["redirect_uri"]
        // The page origin: Referer, then Origin, then `d`, then redirect_uri (OAuth.io's order).
        // A page known only by its redirect_uri (the mobile SDKs) is checked as a redirect target.
        let pageText = [request.headers["referer"], request.headers["origin"], fields["d"]].compactMap { $0 }.first
        guard let page = pageText.map({ WebURL($0, assumeHTTP: true) }) ?? redirectText.flatMap({ WebURL($0) }) else {
            return JSend.error(400, "Cannot find the page origin: send a Referer or Origin header, or the d parameter")
        }
        var options: JSONObject = [:]
        var optionsReadable = true
        if let text = fields["opts"] {
            if let object = JSONValue.parse(Array(text.utf8))?.objectValue { options = object } else { optionsReadable = false }
        }
        let clientState = options["state"]?.stringValue
        // Until the key, the page and the redirect target are verified, an error goes back as
        // text only: posted to the page, as the SDKs wait for it, or shown to the user when a
        // redirect was asked for, since an unverified address is never redirected to.
        func refuse(_ message: String, status: Int = 400) -> HTTPResponse {
            ResultDelivery.refuse(
                .error(message, state: clientState, provider: providerID), page: page, redirectRequested: redirectText != nil,
                status: status)
        }
        guard optionsReadable else { return refuse("Options must be an object") }
        guard let key = fields["k"] else { return refuse("Missing OAuth.io public key.") }
        let app: App
        do throws(RegistryError) {
            app = try await context.registry.app(key: key)
        } catch {
            return error.code == .notFound ? refuse("Unknown public key") : refuse(error.reason, status: error.status)
        }
        let check = DomainCheck(domains: app.domains, gateway: context.gateway)
        let pageAllowed = pageText == nil ? check.allowsRedirect(page) : check.allowsPage(page)
        guard pageAllowed else { return refuse("Origin \"\(page.origin)\" does not match any registered domain") }
        if let redirectText {
            guard let target = WebURL(redirectText), check.allowsRedirect(target) else {
                return refuse("The redirect_uri does not match any registered domain")
            }
        }
        let mobile = fields["mobile"] == "true"
        let clientMode = mobile || options["state_type"]?.stringValue == "client" || clientState == nil
        let origin = page.origin
        let target = ResultDelivery.Target(
            origin: origin, redirectURI: redirectText, redirectType: fields["redirect_type"], userAgent: request.headers["user-agent"],
            secureCookie: context.configuration.publicURL.hasPrefix("https://"))
        func deliver(_ message: String, data: JSONValue = .null, status: Int = 200) -> HTTPResponse {
            ResultDelivery.respond(.error(message, data: data, state: clientState, provider: providerID), to: target, status: status)
        }
        guard let definition = context.providers.definition(providerID) else { return deliver("Unknown provider '\(providerID)'") }
        let keyset: Keyset?
        do throws(RegistryError) {
            keyset = try await context.registry.keyset(appKey: app.key, provider: providerID)
        } catch {
            // An unreachable store is the gateway's failure, not the login's.
            return error.status == 503 ? deliver("The store is unavailable", status: 503) : deliver(error.reason)
        }
        guard let keyset else { return deliver("The app has no keyset for \(providerID)") }
        if keyset.responseType == .code, clientMode {
            return deliver("You must provide a state when server-side auth")
        }
        let version: OAuthVersion
        switch fields["oauthv"] {
        case nil:
            guard let preferred = definition.defaultVersion else { return deliver("\(providerID) has no browser login") }
            version = preferred
        case "1" where definition.oauth1 != nil: version = .oauth1
        case "2" where definition.oauth2 != nil: version = .oauth2
        default: return deliver("Unsupported oauth version")
        }
        guard let stateID = try? SecureRandom.identifier(), let nonce = try? SecureRandom.identifier() else { return deliver("Internal error") }
        var state = LoginState(
            appKey: app.key, provider: providerID, version: version.rawValue, origin: origin, redirectURI: redirectText,
            redirectType: fields["redirect_type"], mobile: mobile, clientState: clientState, clientMode: clientMode,
            responseType: keyset.responseType, codeVerifier: nil, nonce: nil, requestTokenSecret: nil, scopeOverride: nil,
            createdAt: Timestamp.now())
        var parameters = keyset.parameters
        if let scope = options["scope"] {
            // opts.scope replaces the keyset's scope for this login.
            if let text = scope.stringValue { parameters["scope"] = .string(text) }
            if let list = scope.arrayValue { parameters["scope"] = .array(list) }
            state.scopeOverride = scope.stringValue ?? scope.arrayValue?.compactMap(\.stringValue).joined(separator: " ")
        }
        // The code exchange at the callback sends this same client_id (`AppleSignIn.prepared`).
        if AppleSignIn.isApple(definition) { parameters["client_id"] = .string(AppleSignIn.webClientID(parameters)) }
        // Starts that call the provider before the user is there are rate limited.
        let entry: RateLimits.Entry? =
            version == .oauth1 ? .oauth1Start : definition.normalisedOAuth2?.pushedAuthorization != nil ? .pushedStart : nil
        if let entry, let refusal = await RateLimits(context: context).admit(entry, appKey: app.key, request: request) {
            var response = deliver(refusal.message, status: refusal.scope == nil ? 503 : 429)
            if refusal.scope != nil { response.headers.add("Retry-After", String(refusal.retryAfter)) }
            return response
        }
        let callback = callback(for: definition, version: version, stateID: stateID)
        var flow = ["state": stateID, "callback": callback, "nonce": nonce]
        let location: String
        switch version {
        case .oauth2:
            guard let oauth2 = definition.normalisedOAuth2 else { return deliver("\(providerID) has no OAuth 2 login") }
            if let method = oauth2.pkce {
                guard let verifierBytes = try? SecureRandom.bytes(32) else { return deliver("Internal error") }
                let verifier = Base64URL.encode(verifierBytes)
                state.codeVerifier = verifier
                flow["code_verifier"] = verifier
                flow["code_challenge"] = method == .plain ? verifier : Base64URL.encode(Digest.sha256(Array(verifier.utf8)))
            }
            if definition.openid != nil { state.nonce = nonce }
            var extra = options["authorize"]?.objectValue?.compactMapValues(\.stringValue) ?? [:]
            if mobile { extra.merge(oauth2.mobileQuery) { mine, _ in mine } }
            let templates = TemplateContext(keyset: parameters, parameters: oauth2.parameters, flow: flow)
            var authorizeURL = EndpointRequest.browserURL(oauth2.authorize, context: templates, extraQuery: extra)
            if let rule = oauth2.requestObject {
                do throws(ClientAssertionError) {
                    authorizeURL = try await requestObjectURL(authorizeURL, rule: rule, openid: definition.openid, templates: templates)
                } catch {
                    context.logger.warning("Request object not built", ["provider.id": providerID, "error": error.reason])
                    return deliver("Error during the 'request_object' step (\(error.reason))")
                }
            }
            if let pushed = oauth2.pushedAuthorization {
                switch await pushAuthorization(pushed, oauth2: oauth2, authorizeURL: authorizeURL, templates: templates, provider: providerID) {
                case .failure(let problem):
                    context.logger.warning("Pushed authorization request failed", ["provider.id": providerID, "error": problem.message])
                    return deliver(problem.message, data: problem.data)
                case .success(let reference): location = reference
                }
            } else {
                location = authorizeURL
            }
        case .oauth1:
            guard let oauth1 = definition.normalisedOAuth1 else { return deliver("\(providerID) has no OAuth 1 login") }
            let templates = TemplateContext(keyset: parameters, parameters: oauth1.parameters, flow: flow)
            switch await OAuth1Exchange(outbound: outbound).requestToken(oauth1, templates: templates, callback: callback) {
            case .failure(let failure):
                context.metrics.upstream.increment(providerID, "oauth1_request_token", "error")
                context.logger.warning("Request token failed", ["provider.id": providerID, "error": failure.message])
                return deliver(failure.message, data: failure.data)
            case .success(let token):
                context.metrics.upstream.increment(providerID, "oauth1_request_token", "ok")
                state.requestTokenSecret = token.secret
                flow["token"] = token.token
                var authorize = oauth1.authorize
                if authorize.query == nil { authorize.query = ["oauth_token": "{{token}}"] }
                let extra = options["request_token"]?.objectValue?.compactMapValues(\.stringValue) ?? [:]
                location = EndpointRequest.browserURL(
                    authorize, context: TemplateContext(keyset: parameters, parameters: oauth1.parameters, flow: flow), extraQuery: extra)
            }
        }
        let record = state.record
        do throws(StoreError) {
            guard try await putSealed(record, id: LoginRecordID.state(stateID), ttlSeconds: context.configuration.stateTTL, oneTime: true) else {
                return deliver("Internal error")
            }
        } catch {
            if let count = unstoredStates.occurrence() {
                context.logger.error("State not stored", ["request.id": request.requestID, "error": error.description, "states.unstored": "\(count)"])
            }
            return deliver("The store is unavailable", status: 503)
        }
        var response = HTTPResponse(status: 302)
        response.headers.add("Location", location)
        response.headers.add("Cache-Control", "no-store")
        return response
    }
}
