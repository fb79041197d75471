internal import GatehouseCore
internal import HTTPClient
internal import HTTPServer
internal import ProviderEngine

/// The calls an SDK makes with a user's token once logged in (oauthd-protocol.md §1.2–§1.3):
/// `GET /auth/:provider/me` and `/request/:provider/<url>`.
struct ProviderAPI: Sendable {
    let login: LoginService

    private var context: GatewayContext { login.context }
    private var timeout: Duration { .seconds(context.configuration.upstreamTimeout) }

    // MARK: me

    /// `GET /auth/:provider/me[?filter=a,b]`: the unified profile plus `raw`, JSend, CORS.
    func me(_ request: HTTPRequest) async -> HTTPResponse {
        let origin = EchoCORS.origin(request)
        return EchoCORS.apply(await profile(request), origin: origin)
    }

    private func profile(_ request: HTTPRequest) async -> HTTPResponse {
        let caller: APICaller
        switch await authorise(request, needsToken: false) {
        case .failure(let refusal): return refusal.response
        case .success(let found): caller = found
        }
        let filter = request.queryValue("filter").map { $0.split(separator: ",").map { String($0).trimmingWhitespace() } }
        func answer(_ profile: JSONObject) -> HTTPResponse {
            JSend.success(.object(filter.map { ProfileEvaluator.filtered(profile, keeping: $0) } ?? profile))
        }
        if caller.definition.native != nil {
            return await nativeProfile(caller, answer: answer)
        }
        guard let mapping = caller.definition.profileMapping, !mapping.steps.isEmpty else {
            return JSend.error(501, "This provider does not support the me() feature yet")
        }
        guard caller.header.token != nil else { return JSend.error(400, "You must provide a 'token' in 'oauthio' http header") }
        var exports: JSONObject = [:]
        var bodies: [Int: JSONValue] = [:]
        for (index, step) in mapping.steps.enumerated() {
            var flow = caller.templates
            for (name, value) in exports { if let text = ProfileEvaluator.flowValue(value) { flow.flow[name] = text } }
            var url: String
            switch caller.url(step.url, flow) {
            case .failure(let refusal): return refusal.response
            case .success(let rendered): url = rendered
            }
            let values = Template.renderValues(step.query, flow).map { ($0.name, $0.value) }
            var body: [UInt8]? = step.method == "GET" ? nil : []
            var headers = [HTTPHeader(name: "Accept", value: step.signed ? "application/jwt" : "application/json")]
            if step.body == .json {
                body = EndpointRequest.jsonBody(values)
                headers.append(HTTPHeader(name: "Content-Type", value: "application/json"))
            } else if !values.isEmpty {
                let query = PercentEncoding.formEncoded(values)
                url += (url.utf8.contains(UInt8(ascii: "?")) ? "&" : "?") + query
            }
            headers += Template.renderValues(step.headers, flow).map { HTTPHeader(name: $0.name, value: $0.value) }
            if let agent = request.headers["user-agent"] { headers.append(HTTPHeader(name: "User-Agent", value: agent)) }
            let outbound: HTTPClientRequest
            switch caller.request(method: step.method, url: url, headers: headers, body: body, timeout: timeout) {
            case .failure(let refusal): return refusal.response
            case .success(let built): outbound = built
            }
            let response: HTTPClientResponse
            do {
                response = try await call(outbound, provider: caller.definition.id, step: "me")
            } catch {
                if step.optional { continue }
                return upstreamFailure(error, request: request, provider: caller.definition.id)
            }
            var parsed = JSONValue.parse(response.body)
            if step.signed, (200..<300).contains(response.status), let openid = caller.definition.openid {
                let audience = caller.templates.keysetValue("client_id")
                let keys = IDTokenVerifier.AppKeys(caller.templates)
                switch await login.verifier.userInfo(response.body, openid: openid.rendered(caller.templates), audience: audience, keys: keys) {
                case .success(let claims): parsed = claims
                case .failure(let refusal):
                    if step.optional { continue }
                    return JSend.error(502, "The provider's signed profile was refused: \(refusal.reason)")
                }
            }
            if let parsed, ProfileEvaluator.refusesToken(step, body: parsed) {
                return JSend.error(401, "The token is invalid or expired")
            }
            guard (200..<300).contains(response.status), let body = parsed else {
                if step.optional { continue }
                let status = response.status == 401 || response.status == 403 ? response.status : 502
                return JSend.error(status, "The provider refused the profile request (HTTP \(response.status))")
            }
            bodies[index] = body
            ProfileEvaluator.exports(of: step, body: body, into: &exports)
        }
        guard let document = bodies[mapping.document] else {
            return JSend.error(502, "The provider did not return the profile")
        }
        return answer(ProfileEvaluator.profile(mapping, document: document, exports: exports))
    }

    /// Native sign-ins (Apple, carrier one-click) have no profile endpoint to call; see
    /// `LoginService.nativeProfile`.
    private func nativeProfile(_ caller: APICaller, answer: (JSONObject) -> HTTPResponse) async -> HTTPResponse {
        let fields = caller.header.fields
        let token = (fields["access_token"] ?? fields["token"]).flatMap { $0.isEmpty || $0.utf8.count > 16_384 ? nil : $0 }
        let idToken = fields["id_token"].flatMap { $0.isEmpty || $0.utf8.count > 16_384 ? nil : $0 }
        guard token != nil || idToken != nil else { return JSend.error(400, "You must provide a 'token' in 'oauthio' http header") }
        switch await login.nativeProfile(
            provider: caller.definition.id, definition: caller.definition, appKey: caller.header.key, token: token, idToken: idToken)
        {
        case .success(let profile):
            guard let object = profile.objectValue else { return JSend.error(502, "The stored profile is damaged") }
            return answer(object)
        case .failure(let problem):
            return JSend.error(problem.status, problem.status == 401 ? "The token is invalid or expired" : problem.message)
        }
    }

    // MARK: /request

    /// `/request/:provider/<url>`: the call made with the user's token injected as the
    /// definition says; the provider's status, headers and body come back as they are, but
    /// confined (`ProxiedBody`), as are this route's own errors.
    func proxy(_ request: HTTPRequest) async -> HTTPResponse {
        let origin = EchoCORS.origin(request)
        return ProxiedBody.confined(EchoCORS.apply(await forward(request), origin: origin))
    }

    private func forward(_ request: HTTPRequest) async -> HTTPResponse {
        let caller: APICaller
        switch await authorise(request, needsToken: true) {
        case .failure(let refusal): return refusal.response
        case .success(let found): caller = found
        }
        let base: String
        switch caller.base() {
        case .failure(let refusal): return refusal.response
        case .success(let rendered): base = rendered
        }
        guard !ForwardingRules.hasControlCharacters(base) else { return JSend.error(400, "A forwarded value contains control characters") }
        let url: String
        switch UpstreamURL.resolve(raw: request.parameter("url"), query: request.query, base: base) {
        case .failure(let refusal): return refusal.response
        case .success(let resolved): url = resolved
        }
        var headers: [HTTPHeader] = []
        let connectionTokens = Set((request.headers["connection"] ?? "").split(separator: ",").map { String($0).trimmingWhitespace().lowercased() })
        for field in request.headers {
            let name = field.name.lowercased()
            guard !ForwardingRules.droppedRequestHeaders.contains(name), !connectionTokens.contains(name) else { continue }
            guard !ForwardingRules.hasControlCharacters(field.value) else {
                return JSend.error(400, "A forwarded header contains control characters")
            }
            headers.append(HTTPHeader(name: field.name, value: field.value))
        }
        let body: [UInt8]? = ["GET", "HEAD"].contains(request.method) && request.body.isEmpty ? nil : request.body
        let outbound: HTTPClientRequest
        switch caller.request(method: request.method, url: url, headers: headers, body: body, timeout: timeout) {
        case .failure(let refusal): return refusal.response
        case .success(let built): outbound = built
        }
        let response: HTTPClientResponse
        do {
            response = try await call(outbound, provider: caller.definition.id, step: "request")
        } catch {
            return upstreamFailure(error, request: request, provider: caller.definition.id)
        }
        var answer = HTTPResponse(status: response.status, body: response.body)
        for header in response.headers where !ForwardingRules.droppedResponseHeaders.contains(header.name.lowercased()) {
            answer.headers.add(header.name, header.value)
        }
        return answer
    }

    // MARK: Shared

    /// The app (by the header's public key), the provider, the app's keyset, and the
    /// whitelist check when the call comes from a page.
    private func authorise(_ request: HTTPRequest, needsToken: Bool) async -> Result<APICaller, Refusal> {
        var header: OAuthioHeader
        switch OAuthioHeader.parse(request) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let parsed): header = parsed
        }
        let providerID = request.parameter("provider").lowercased()
        guard let definition = context.providers.definition(providerID) else {
            return .failure(Refusal(JSend.error(404, "Unknown provider '\(providerID.prefix(64))'")))
        }
        // An OAuth 1-only provider needs no `oauthv=1` to be understood.
        if definition.oauth2 == nil, definition.oauth1 != nil { header.version = .oauth1 }
        let app: App
        do throws(RegistryError) {
            app = try await context.registry.app(key: header.key)
        } catch {
            if error.code == .notFound { return .failure(Refusal(JSend.fail(400, field: "oauthio_key", "unknown public key"))) }
            return .failure(Refusal(JSend.error(error.status, error.reason)))
        }
        // oauthd never checked the page here (§6.2); a page outside the whitelist is refused.
        for candidate in [request.headers["origin"], request.headers["referer"]] {
            guard let text = candidate, let page = WebURL(text, assumeHTTP: true) else { continue }
            guard DomainCheck(domains: app.domains, gateway: context.gateway).allowsPage(page) else {
                return .failure(Refusal(JSend.error(403, "Origin \"\(page.origin)\" does not match any registered domain")))
            }
            break
        }
        let keyset: Keyset?
        do throws(RegistryError) {
            keyset = try await context.registry.keyset(appKey: app.key, provider: providerID)
        } catch {
            return .failure(Refusal(JSend.error(error.status, error.reason)))
        }
        guard let keyset else { return .failure(Refusal(JSend.error(400, "The app has no keyset for \(providerID)"))) }
        if header.version == .oauth1, definition.oauth1 == nil {
            return .failure(Refusal(JSend.error(400, "\(providerID) has no OAuth 1 API")))
        }
        if needsToken, header.token?.isEmpty ?? true {
            return .failure(Refusal(JSend.error(400, "You must provide a 'token' in 'oauthio' http header")))
        }
        return .success(APICaller(definition: definition, keyset: keyset.parameters, header: header, dpop: login.dpop))
    }

    /// One upstream call, counted in the metrics by provider, step and outcome.
    private func call(_ outbound: HTTPClientRequest, provider: String, step: String) async throws(HTTPClientError) -> HTTPClientResponse {
        do {
            let response = try await login.outbound.execute(outbound)
            context.metrics.upstream.increment(provider, step, response.status < 400 ? "ok" : "error")
            return response
        } catch {
            context.metrics.upstream.increment(provider, step, error == .timedOut ? "timeout" : "unreachable")
            throw error
        }
    }

    private func upstreamFailure(_ error: HTTPClientError, request: HTTPRequest, provider: String) -> HTTPResponse {
        context.logger.warning("Provider call failed", ["provider.id": provider, "request.id": request.requestID, "error": error.shortDescription])
        if error == .timedOut { return JSend.error(504, "The provider did not answer in time") }
        if error == .invalidURL || error == .invalidRequest { return JSend.error(400, "The request cannot be sent to the provider") }
        if error == .responseTooLarge { return JSend.error(502, "The provider's answer is too large") }
        return JSend.error(502, "The provider is unreachable")
    }
}
