internal import GatehouseCore
internal import GatehouseCrypto
internal import HTTPClient
internal import HTTPServer
internal import JOSE
internal import ProviderEngine

extension LoginService {
    /// The provider sends the browser back here (`GET /auth`, or `POST /auth` for
    /// `response_mode=form_post`). The state is taken from the store in one atomic step, so
    /// a replayed callback finds nothing.
    func callback(_ request: HTTPRequest) async -> HTTPResponse {
        let fields = RequestFields(request)
        var stateID = fields["state"]
        if stateID == nil, let referer = request.headers["referer"], let query = referer.split(separator: "?", maxSplits: 1).last {
            stateID = FormField.parse(query)?.first { $0.name == "state" }?.value
        }
        guard let stateID, AppRegistry.isIdentifier(stateID) else { return JSend.fail(400, field: "state", "missing") }
        let taken: [UInt8]?
        do throws(StoreError) {
            taken = try await takeSealed(LoginRecordID.state(stateID))
        } catch {
            return JSend.error(503, "The store is unavailable")
        }
        guard let taken, let state = LoginState(record: taken) else {
            return JSend.fail(400, field: "state", "invalid or expired")
        }
        let target = ResultDelivery.Target(
            origin: state.origin, redirectURI: state.redirectURI, redirectType: state.redirectType, userAgent: request.headers["user-agent"],
            secureCookie: context.configuration.publicURL.hasPrefix("https://"))
        let outcome = await finish(state: state, stateID: stateID, fields: fields, request: request)
        return ResultDelivery.respond(outcome, to: target)
    }

    private func finish(state: LoginState, stateID: String, fields: RequestFields, request: HTTPRequest) async -> LoginOutcome {
        let provider = state.provider
        func failure(_ message: String, _ data: JSONValue = .null) -> LoginOutcome {
            .error(message, data: data, state: state.clientState, provider: provider)
        }
        guard let definition = context.providers.definition(provider) else { return failure("Unknown provider '\(provider)'") }
        let keyset: Keyset?
        do throws(RegistryError) {
            keyset = try await context.registry.keyset(appKey: state.appKey, provider: provider)
        } catch {
            return failure(error.reason)
        }
        guard let keyset else { return failure("The app has no keyset for \(provider)") }
        var parameters = keyset.parameters
        if let scope = state.scopeOverride { parameters["scope"] = .string(scope) }
        let callback = callback(
            for: definition, version: OAuthVersion(rawValue: state.version) ?? .oauth2, stateID: stateID)
        var result: JSONObject
        if state.version == OAuthVersion.oauth1.rawValue {
            guard let oauth1 = definition.normalisedOAuth1 else { return failure("\(provider) has no OAuth 1 login") }
            guard let token = fields["oauth_token"] else { return failure("unable to find the oauth_token") }
            let verifier = fields["oauth_verifier"]
            if verifier == nil, !oauth1.ignoreVerifier { return failure("unable to find the oauth_verifier") }
            let templates = TemplateContext(keyset: parameters, parameters: oauth1.parameters, flow: ["callback": callback, "state": stateID])
            switch await OAuth1Exchange(outbound: outbound).accessToken(
                oauth1, templates: templates, token: token, tokenSecret: state.requestTokenSecret ?? "", verifier: verifier)
            {
            case .failure(let problem):
                context.metrics.upstream.increment(provider, "oauth1_access_token", "error")
                return failure(problem.message, problem.data)
            case .success(let fields):
                context.metrics.upstream.increment(provider, "oauth1_access_token", "ok")
                result = fields
            }
            result["request"] = Self.requestDescription(
                oauth1.request, required: definition.requestFlowFields.oauth1, parameters: oauth1.parameters, keyset: parameters)
        } else {
            guard let oauth2 = definition.normalisedOAuth2 else { return failure("\(provider) has no OAuth 2 login") }
            if fields["error"] != nil || fields["error_description"] != nil {
                var data: JSONObject = ["error": .string(fields["error"] ?? "error")]
                if let uri = fields["error_uri"] { data["error_uri"] = .string(uri) }
                return failure(fields["error_description"] ?? Self.standardErrorText(fields["error"]), .object(data))
            }
            guard let code = fields["code"] else { return failure("unable to find authorize code") }
            let isApple = AppleSignIn.isApple(definition)
            if isApple {
                do throws(AppleError) {
                    parameters = try await apple.prepared(parameters, definition: definition)
                } catch {
                    return failure(error.reason)
                }
            }
            var flow = ["code": code, "state": stateID, "callback": callback]
            if let verifier = state.codeVerifier { flow["code_verifier"] = verifier }
            for name in oauth2.authorize.extra { if let value = fields[name] { flow[name] = value } }
            let templates = TemplateContext(keyset: parameters, parameters: oauth2.parameters, flow: flow)
            switch await exchangeCode(oauth2, templates: templates, provider: provider) {
            case .failure(let problem):
                context.logger.warning("Code exchange failed", ["provider.id": provider, "request.id": request.requestID, "error": problem.message])
                if isApple, problem.refusesClient { await apple.forgetSecret(parameters, definition: definition) }
                return failure(problem.message, problem.data)
            case .success(let fields): result = fields
            }
            if let lookup = oauth2.lookup, let token = result["access_token"]?.stringValue {
                switch await self.lookup(lookup, templates: templates, token: token, provider: provider) {
                case .failure(let problem):
                    if !lookup.optional { return failure(problem.message, problem.data) }
                case .success(let values):
                    for (name, value) in values where result[name] == nil { result[name] = value }
                }
            }
            for name in oauth2.authorize.extra { if let value = flow[name] { result[name] = .string(value) } }
            if isApple {
                // The identity token is the only signed statement of who signed in.
                guard let idToken = result["id_token"]?.stringValue else { return failure("Apple's token response has no id_token") }
                do throws(AppleError) {
                    let claims = try await apple.verify(
                        idToken, definition: definition, audiences: AppleSignIn.audiences(keyset.parameters),
                        nonce: .signIn(state.nonce), authorizationCode: nil)
                    try AppleSignIn.checkRealUserStatus(claims, keyset: keyset.parameters)
                    let name = await rememberName(PersonName(appleUser: fields["user"]), appKey: state.appKey, subject: claims.sub ?? "")
                    let profile = AppleSignIn.profile(claims, name: name)
                    result["user"] = profile
                    if let accessToken = result["access_token"]?.stringValue {
                        let session = NativeSession(appKey: state.appKey, provider: state.provider, profile: profile)
                        _ = try? await rememberNativeSession(session, token: accessToken)
                    }
                } catch {
                    return failure(error.reason)
                }
            } else if let openid = definition.openid, let idToken = result["id_token"]?.stringValue {
                let audience = parameters["client_id"]?.stringValue ?? ""
                if let problem = await verifier.verify(
                    idToken, openid: openid.rendered(templates), audience: audience, keys: IDTokenVerifier.AppKeys(templates), nonce: state.nonce)
                {
                    return failure("The id_token is not valid: \(problem)")
                }
            }
            result["request"] = Self.requestDescription(
                oauth2.request, required: definition.requestFlowFields.oauth2, parameters: oauth2.parameters, keyset: parameters)
        }
        return await deliverable(result, state: state)
    }

    /// The first-login name for an Apple subject: the stored one if any, else `fresh`, which is
    /// then stored. Apple sends the name once; losing it would lose it for good.
    func rememberName(_ fresh: PersonName?, appKey: String, subject: String) async -> PersonName? {
        let id = "apple-name:\(appKey):\(subject)"
        if let stored = try? await readSealed(id), let name = try? JSONCoding.decode(PersonName.self, from: stored) {
            return name
        }
        guard let fresh, !subject.isEmpty, let bytes = try? JSONCoding.encode(fresh) else { return fresh }
        _ = try? await putSealed(bytes, id: id, ttlSeconds: 10 * 365 * 86_400)
        return fresh
    }

    /// What the browser gets: in client mode the credentials (without the refresh token);
    /// with an app-supplied state a one-time code, plus the credentials unless the app is
    /// server-side only.
    private func deliverable(_ result: JSONObject, state: LoginState) async -> LoginOutcome {
        var data = result
        data["refresh_token"] = nil
        if state.clientMode {
            return .success(data, state: state.clientState, provider: state.provider)
        }
        guard let code = try? SecureRandom.identifier() else {
            return .error("Internal error", state: state.clientState, provider: state.provider)
        }
        let record = LoginCode(appKey: state.appKey, provider: state.provider, clientState: state.clientState, result: result)
        do throws(StoreError) {
            guard case let bytes = record.record,
                try await putSealed(
                    bytes, id: LoginRecordID.code(code, appKey: state.appKey), ttlSeconds: context.configuration.codeTTL, oneTime: true)
            else { return .error("Internal error", state: state.clientState, provider: state.provider) }
        } catch {
            return .error("The store is unavailable", state: state.clientState, provider: state.provider)
        }
        if state.responseType == .code { data = [:] }
        data["code"] = .string(code)
        return .success(data, state: state.clientState, provider: state.provider)
    }

    /// Exchanges an authorization code at the token endpoint.
    func exchangeCode(_ oauth2: OAuth2Definition, templates: TemplateContext, provider: String) async -> Result<JSONObject, ProviderProblem> {
        let url: String
        switch EndpointRequest.url(oauth2.accessToken, context: templates, provider: provider, source: "callback") {
        case .failure(let refusal): return .failure(ProviderProblem(message: refusal.message, data: .null))
        case .success(let rendered): url = rendered
        }
        let endpoint = oauth2.accessToken
        let first: HTTPClientRequest
        do throws(ClientAssertionError) { first = try tokenEndpointRequest(endpoint, oauth2: oauth2, url: url, templates: templates) } catch {
            return .failure(ProviderProblem(message: "Error during the 'access_token' step (\(error.reason))", data: .null))
        }
        return await tokenCall(first, endpoint: endpoint, step: "access_token", extra: endpoint.extra, provider: provider) { nonce in
            try? tokenEndpointRequest(endpoint, oauth2: oauth2, url: url, templates: templates, nonce: nonce)
        }
    }

    /// Token answer fields a login result carries as they are, besides the endpoint's `extra`.
    private static let copiedTokenFields = ["refresh_token", "id_token", "scope"]

    /// Calls a token endpoint and turns its answer into OAuth.io's result fields.
    /// `renew` rebuilds the request with the nonce a DPoP provider demanded (RFC 9449 §8): the
    /// call is made once more with it.
    func tokenCall(
        _ request: HTTPClientRequest, endpoint: Endpoint, step: String, extra: [String], provider: String,
        renew: ((String) -> HTTPClientRequest?)? = nil
    ) async -> Result<JSONObject, ProviderProblem> {
        var response: HTTPClientResponse
        do {
            response = try await outbound.execute(request)
            if let renew, let nonce = DPoPSigner.demandedNonce(response), let again = renew(nonce) {
                response = try await outbound.execute(again)
            }
        } catch {
            context.metrics.upstream.increment(provider, step, "unreachable")
            return .failure(ProviderProblem(message: "Error during the '\(step)' step (\(error.upstreamReason))", data: .null))
        }
        let fields = TokenResponse.fields(of: response, endpoint: endpoint)
        guard response.status == 200 || response.status == 201, let fields, fields["error"] == nil,
            let accessToken = fields["access_token"]?.stringValue, !accessToken.isEmpty
        else {
            let data = TokenResponse.errorData(fields)
            let description = TokenResponse.reason(data, status: response.status)
            context.metrics.upstream.increment(provider, step, "error")
            return .failure(ProviderProblem(message: "Error during the '\(step)' step (\(description))", data: data))
        }
        context.metrics.upstream.increment(provider, step, "ok")
        // Sized for the usual fields at once: growing from one member rehashed them twice.
        var result = JSONObject(minimumCapacity: 6 + extra.count)
        result["access_token"] = .string(accessToken)
        result["token_type"] = fields["token_type"] ?? "Bearer"
        if let expires = TokenResponse.expiresIn(fields) { result["expires_in"] = .number(Double(expires)) }
        for key in Self.copiedTokenFields {
            if let value = fields[key] { result[key] = value }
        }
        for key in extra {
            if let value = fields[key] { result[key] = value }
        }
        if !endpoint.export.isEmpty {
            var exports: JSONObject = [:]
            ProfileEvaluator.exports(endpoint.export, body: .object(fields), into: &exports)
            result.merge(exports) { token, _ in token }
        }
        return .success(result)
    }

    /// `request` as the SDKs receive it: the API base, templated query and headers, and the
    /// extra fields they must echo back in the `oauthio` header.
    /// `required` is `ProviderDefinition.requiredFields(of: endpoint)`.
    static func requestDescription(
        _ endpoint: Endpoint?, required: [String], parameters: [String: Parameter], keyset: JSONObject
    ) -> JSONValue {
        guard let endpoint else { return .object([:]) }
        var description: JSONObject = ["url": .string(endpoint.url)]
        if let query = endpoint.query { description["query"] = .object(JSONObject(strings: query)) }
        if let headers = endpoint.headers { description["headers"] = .object(JSONObject(strings: headers)) }
        if !required.isEmpty { description["required"] = .array(required.map(JSONValue.string)) }
        if endpoint.cors { description["cors"] = true }
        var shown: JSONObject = [:]
        for (name, parameter) in parameters where parameter.isPublic {
            if let value = keyset[name] { shown[name] = value }
        }
        if !shown.isEmpty { description["parameters"] = .object(shown) }
        return .object(description)
    }

    static func basicAuthorization(_ templates: TemplateContext) -> HTTPHeader {
        // RFC 6749 §2.3.1: each part form-encoded before joining.
        let id = PercentEncoding.encode(templates.keysetValue("client_id"))
        let secret = PercentEncoding.encode(templates.keysetValue("client_secret"))
        return HTTPHeader(name: "Authorization", value: "Basic " + Base64.encode(Array("\(id):\(secret)".utf8)))
    }

    static func standardErrorText(_ code: String?) -> String {
        switch code {
        case "access_denied": "The resource owner or authorization server denied the request."
        case "invalid_request": "The request is missing a required parameter or is otherwise malformed."
        case "unauthorized_client": "The client is not authorized to request an authorization code using this method."
        case "unsupported_response_type": "The authorization server does not support obtaining an authorization code using this method."
        case "invalid_scope": "The requested scope is invalid, unknown, or malformed."
        case "server_error": "The authorization server encountered an unexpected condition."
        case "temporarily_unavailable": "The authorization server is currently unable to handle the request."
        default: "The provider refused the authorization."
        }
    }
}

/// A provider-side failure: our message plus the provider's standard error fields.
struct ProviderProblem: Error, Sendable {
    var message: String
    var data: JSONValue

    /// The caller's token is at fault, not the provider or the keyset: answer 4xx, not 502.
    var rejectsCallerToken: Bool { TokenResponse.rejectsCallerToken(data) }

    /// The provider refused the app's own credentials: for Apple, a client_secret to re-mint.
    var refusesClient: Bool { TokenResponse.refusesClient(data) }
}
