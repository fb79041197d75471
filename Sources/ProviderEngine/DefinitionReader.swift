internal import Carrier
public import GatehouseCore

/// A problem in a provider file: where (a JSON Pointer) and what.
public struct DefinitionDefect: Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var message: String

    public var description: String { "\(path.isEmpty ? "/" : path): \(message)" }
}

/// Turns a provider document into a `ProviderDefinition`, collecting every defect rather
/// than stopping at the first: an operator fixing a file wants the whole list at once.
/// Unknown keys are defects, so a misspelt `acces_token` cannot silently disable a flow.
public struct DefinitionReader {
    /// Collected by `defect(_:_:)` (DefinitionReader+Primitives.swift).
    var defects: [DefinitionDefect] = []

    public init() {}

    /// The definition, or the defects that prevent it.
    public static func read(id: String, document: JSONValue) -> Result<ProviderDefinition, DefinitionFailure> {
        var reader = DefinitionReader()
        let definition = reader.definition(id: id, document)
        if let definition, reader.defects.isEmpty { return .success(definition) }
        return .failure(DefinitionFailure(defects: reader.defects))
    }

    private static let topKeys: Set<String> = [
        "$schema", "name", "description", "url", "docs", "logo", "oauth1", "oauth2", "openid", "profile", "native",
    ]
    private static let oauth2Keys: Set<String> = [
        "authorize", "access_token", "request", "refresh", "revoke", "parameters", "pkce", "mobile", "client_authentication",
        "token_proof", "lookup", "client_assertion", "par", "dpop", "request_object", "scopeless",
    ]
    private static let oauth1Keys: Set<String> = [
        "request_token", "authorize", "access_token", "request", "parameters", "ignore_verifier", "sign_requests",
    ]
    /// The token-answer fields Gatehouse reads by name, which `names` may map.
    private static let tokenFieldNames: Set<String> = [
        "access_token", "refresh_token", "expires_in", "token_type", "id_token", "scope", "error", "error_description",
    ]
    static let endpointKeys: Set<String> = [
        "url", "method", "query", "headers", "format", "extra", "cors", "body", "answer", "names", "hosts", "prefix",
    ]
    private static let parameterKeys: Set<String> = ["type", "values", "separator", "cardinality", "scope", "default"]
    private static let methods: Set<String> = ["GET", "POST", "PUT", "PATCH", "DELETE"]

    private mutating func definition(id: String, _ document: JSONValue) -> ProviderDefinition? {
        guard let object = object(document, at: "", keys: Self.topKeys) else { return nil }
        let name = requiredString(object["name"], at: "/name")
        let base = optionalURL(object["url"], at: "/url", absolute: true)
        let oauth2 = object["oauth2"].flatMap { oauth2Definition($0, base: base) }
        let oauth1 = object["oauth1"].flatMap { oauth1Definition($0, base: base) }
        if object["oauth2"] == nil, object["oauth1"] == nil, object["native"] == nil {
            defect("", "a provider needs an oauth2, oauth1 or native block")
        }
        let openid = object["openid"].flatMap { openIDDefinition($0, parameters: oauth2?.parameters ?? oauth1?.parameters ?? [:]) }
        var profileMapping: ProfileMapping?
        if let profile = object["profile"] {
            // Relative profile URLs (`/me`) are API calls: resolved against the request base.
            let request = oauth2?.request ?? oauth1?.request
            var profileReader = ProfileReader(base: request?.url ?? base, learnsHost: !(request?.hosts.isEmpty ?? true))
            profileMapping = profileReader.mapping(profile, at: "/profile")
            defects += profileReader.defects
            let parameters = oauth2?.parameters ?? oauth1?.parameters ?? [:]
            for (index, step) in (profileMapping?.steps ?? []).enumerated() {
                let texts = [step.url] + Array(step.query.values) + Array(step.headers.values)
                for name in texts.flatMap({ Template.references(in: $0).keyset }).sorted() where parameters[name] == nil {
                    defect("/profile/fetch/\(index)", "{\(name)} is not a declared parameter")
                }
            }
        }
        if openid == nil, let steps = profileMapping?.steps {
            for (index, step) in steps.enumerated() where step.signed {
                defect("/profile/fetch/\(index)/format", "jwt needs an openid block, whose issuer and keys the answer is checked against")
            }
        }
        if let rule = oauth2?.requestObject, rule.audience == nil, openid == nil {
            defect("/oauth2/request_object/audience", "required without an openid block, whose issuer is the default")
        }
        if oauth2?.requestObject?.encryption != nil, openid?.jwksURI == nil {
            defect("/oauth2/request_object/encryption", "the provider's encryption key comes from the openid block's jwks_uri: declare it")
        }
        let carrier = object["native"].flatMap { nativeBlock($0, hasBase: base != nil) }
        if carrier != nil, oauth2 != nil || oauth1 != nil {
            defect("/native/kind", "a carrier provider has no oauth1 or oauth2 block")
        }

        checkKeysetReferences(oauth2: oauth2, oauth1: oauth1)
        guard let name else { return nil }
        var definition = ProviderDefinition(
            id: id, name: name, description: optionalString(object["description"], at: "/description"), url: base,
            docs: optionalURL(object["docs"], at: "/docs", absolute: true), logo: optionalString(object["logo"], at: "/logo"),
            oauth2: oauth2, oauth1: oauth1, openid: openid, profile: object["profile"], native: object["native"],
            document: document)
        definition.profileMapping = profileMapping
        definition.carrier = carrier
        definition.normalise()
        return definition
    }

    /// `native`: `{"kind": "apple"}`, or `{"kind": "carrier", …}` with a carrier definition,
    /// whose defects are reported here with their paths like every other.
    private mutating func nativeBlock(_ value: JSONValue, hasBase: Bool) -> CarrierDefinition? {
        guard let object = value.objectValue else {
            defect("/native", "must be an object")
            return nil
        }
        switch object["kind"]?.stringValue {
        case "apple":
            for key in object.keys.sorted() where key != "kind" { defect("/native/" + key, "unknown key") }
            return nil
        case "carrier":
            switch CarrierDefinitionReader.read(value, base: "/native", hasBaseURL: hasBase) {
            case .success(let carrier): return carrier
            case .failure(let failure):
                defects += failure.defects.map { DefinitionDefect(path: $0.path, message: $0.message) }
                return nil
            }
        default:
            defect("/native/kind", "must be \"apple\" or \"carrier\"")
            return nil
        }
    }

    /// `pkce`: true (S256), false, or the method by name.
    private mutating func pkceMethod(_ value: JSONValue?) -> PKCEMethod? {
        if case .string(let name)? = value, let method = PKCEMethod(rawValue: name) { return method }
        switch value {
        case nil, .bool(false)?: return nil
        case .bool(true)?: return .s256
        default:
            defect("/oauth2/pkce", "must be true, false, \"S256\" or \"plain\"")
            return nil
        }
    }

    private mutating func oauth2Definition(_ value: JSONValue, base: String?) -> OAuth2Definition? {
        guard let object = object(value, at: "/oauth2", keys: Self.oauth2Keys) else { return nil }
        let authorize = requiredEndpoint(object["authorize"], at: "/oauth2/authorize", base: base)
        let accessToken = tokenEndpoint(object["access_token"], base: base)
        let request = object["request"].flatMap { endpoint($0, at: "/oauth2/request", base: base) }
        let refresh = object["refresh"].flatMap { endpoint($0, at: "/oauth2/refresh", base: base, defaultMethod: "POST") }
        let revoke = object["revoke"].flatMap { endpoint($0, at: "/oauth2/revoke", base: base, defaultMethod: "POST") }
        let parameters = parameters(object["parameters"], at: "/oauth2/parameters")
        let pkce = pkceMethod(object["pkce"])
        var mobileQuery: [String: String] = [:]
        if let mobile = object["mobile"] {
            mobileQuery = stringMap(mobile, at: "/oauth2/mobile") ?? [:]
        }
        var authentication = ClientAuthentication.body
        if let text = optionalString(object["client_authentication"], at: "/oauth2/client_authentication") {
            if let parsed = ClientAuthentication(rawValue: text) {
                authentication = parsed
            } else {
                defect("/oauth2/client_authentication", "must be \"body\", \"basic\", \"private_key_jwt\" or \"client_secret_jwt\"")
            }
        }
        let clientAssertion = self.clientAssertion(object["client_assertion"], authentication: authentication, parameters: parameters)
        var tokenProof: TokenProof?
        if let proof = object["token_proof"], let fields = self.object(proof, at: "/oauth2/token_proof", keys: ["name", "enabled_by"]) {
            let name = requiredString(fields["name"], at: "/oauth2/token_proof/name")
            let enabledBy = requiredString(fields["enabled_by"], at: "/oauth2/token_proof/enabled_by")
            if let enabledBy, parameters[enabledBy] == nil {
                defect("/oauth2/token_proof/enabled_by", "'\(enabledBy)' is not a declared parameter")
            }
            if let name, let enabledBy { tokenProof = TokenProof(name: name, enabledBy: enabledBy) }
        }
        let lookup = object["lookup"].flatMap { self.lookup($0, base: base) }
        let pushed = object["par"].flatMap { endpoint($0, at: "/oauth2/par", base: base, defaultMethod: "POST") }
        let requestObject = object["request_object"].flatMap { self.requestObject($0, parameters: parameters) }
        let dpop = optionalBool(object["dpop"], at: "/oauth2/dpop") ?? false
        if dpop, parameters["dpop_key"] == nil {
            defect("/oauth2/parameters", "dpop signs its proofs with the keyset's dpop_key: declare it")
        }
        let scopeless = optionalBool(object["scopeless"], at: "/oauth2/scopeless") ?? false
        if scopeless, parameters["scope"]?.defaultValue != nil {
            defect("/oauth2/scopeless", "a provider that needs no scope has no default scope: drop one or the other")
        }
        guard let authorize, let accessToken else { return nil }
        return OAuth2Definition(
            authorize: authorize, accessToken: accessToken, request: request, refresh: refresh, revoke: revoke,
            parameters: parameters, pkce: pkce, mobileQuery: mobileQuery, clientAuthentication: authentication, tokenProof: tokenProof,
            lookup: lookup, clientAssertion: clientAssertion, pushedAuthorization: pushed, requestObject: requestObject, dpop: dpop,
            scopeless: scopeless)
    }

    private mutating func oauth1Definition(_ value: JSONValue, base: String?) -> OAuth1Definition? {
        guard let object = object(value, at: "/oauth1", keys: Self.oauth1Keys) else { return nil }
        let requestToken = requiredEndpoint(object["request_token"], at: "/oauth1/request_token", base: base, defaultMethod: "POST")
        let authorize = requiredEndpoint(object["authorize"], at: "/oauth1/authorize", base: base)
        let accessToken = requiredEndpoint(object["access_token"], at: "/oauth1/access_token", base: base, defaultMethod: "POST")
        let request = object["request"].flatMap { endpoint($0, at: "/oauth1/request", base: base) }
        let parameters = parameters(object["parameters"], at: "/oauth1/parameters")
        let ignoreVerifier = optionalBool(object["ignore_verifier"], at: "/oauth1/ignore_verifier") ?? false
        let signsRequests = optionalBool(object["sign_requests"], at: "/oauth1/sign_requests") ?? true
        if !signsRequests, request == nil { defect("/oauth1/sign_requests", "false needs a request block whose query or headers authorise calls") }
        // An OAuth 1.0a signature covers form parameters only (RFC 5849 §3.4.1.3).
        for (endpoint, name) in [(requestToken, "request_token"), (authorize, "authorize"), (accessToken, "access_token"), (request, "request")]
        where endpoint?.body == .json {
            defect("/oauth1/\(name)/body", "must be form: an OAuth 1.0a signature covers form bodies only")
        }
        guard let requestToken, let authorize, let accessToken else { return nil }
        return OAuth1Definition(
            requestToken: requestToken, authorize: authorize, accessToken: accessToken, request: request,
            parameters: parameters, ignoreVerifier: ignoreVerifier, signsRequests: signsRequests)
    }

    mutating func requiredEndpoint(_ value: JSONValue?, at path: String, base: String?, defaultMethod: String = "GET") -> Endpoint? {
        guard let value else {
            defect(path, "required")
            return nil
        }
        return endpoint(value, at: path, base: base, defaultMethod: defaultMethod)
    }

    /// A string endpoint is a URL; an object spells out method, query, headers and format.
    /// Relative URLs (starting with `/`) are resolved against the provider's `url`.
    mutating func endpoint(_ value: JSONValue, at path: String, base: String?, defaultMethod: String = "GET") -> Endpoint? {
        if let text = value.stringValue {
            guard let url = resolve(text, base: base, at: path) else { return nil }
            return Endpoint(url: url, method: defaultMethod)
        }
        guard let object = object(value, at: path, keys: Self.endpointKeys) else { return nil }
        var hosts: [APIHost] = []
        for (index, text) in (object["hosts"].flatMap { stringList($0, at: path + "/hosts") } ?? []).enumerated() {
            if let host = APIHost(text) {
                hosts.append(host)
            } else {
                defect("\(path)/hosts/\(index)", "must be an origin such as https://api.example.com or https://*.example.com")
            }
        }
        var url: String?
        if let text = object["url"]?.stringValue, object["hosts"] != nil, LearnedOrigin(template: text) != nil {
            url = text
        } else if let text = object["url"]?.stringValue {
            url = resolve(text, base: base, at: path + "/url")
        } else if object["url"] != nil {
            defect(path + "/url", "must be a string")
        } else if let base {
            url = base
        } else {
            defect(path + "/url", "required when the provider has no base url")
        }
        var method = defaultMethod
        if let text = optionalString(object["method"], at: path + "/method") {
            if Self.methods.contains(text.uppercased()) {
                method = text.uppercased()
            } else {
                defect(path + "/method", "must be one of GET, POST, PUT, PATCH, DELETE")
            }
        }
        let query = object["query"].flatMap { stringMap($0, at: path + "/query") }
        let headers = object["headers"].flatMap { stringMap($0, at: path + "/headers") }
        let format = optionalString(object["format"], at: path + "/format")
        let extra = object["extra"].flatMap { stringList($0, at: path + "/extra") } ?? []
        let cors = optionalBool(object["cors"], at: path + "/cors") ?? false
        var body = Endpoint.BodyEncoding.form
        if let text = optionalString(object["body"], at: path + "/body") {
            if let encoding = Endpoint.BodyEncoding(rawValue: text) { body = encoding } else { defect(path + "/body", "must be form or json") }
        }
        var answer: ProfilePath?
        if let text = optionalString(object["answer"], at: path + "/answer") {
            answer = ProfilePath(text)
            if answer == nil { defect(path + "/answer", "'\(text)' is not a valid path (a.b, a[0])") }
        }
        let names = object["names"].flatMap { stringMap($0, at: path + "/names") } ?? [:]
        for name in names.keys.sorted() where !Self.tokenFieldNames.contains(name) {
            defect(path + "/names/" + name, "must be one of " + Self.tokenFieldNames.sorted().joined(separator: ", "))
        }
        let prefix = optionalString(object["prefix"], at: path + "/prefix")
        if let prefix, prefix.isEmpty || prefix.utf8.count > 64 { defect(path + "/prefix", "must be 1 to 64 characters") }
        guard let url else { return nil }
        return Endpoint(
            url: url, method: method, query: query, headers: headers, format: format, extra: extra, cors: cors, body: body, answer: answer,
            names: names, hosts: hosts, prefix: prefix)
    }

    private mutating func parameters(_ value: JSONValue?, at path: String) -> [String: Parameter] {
        guard let value else {
            return ["client_id": Parameter(), "client_secret": Parameter()]
        }
        guard let object = value.objectValue else {
            defect(path, "must be an object")
            return [:]
        }
        var result: [String: Parameter] = [:]
        for (name, spec) in object {
            let here = path + "/" + name
            if spec.stringValue != nil {
                result[name] = Parameter()
                continue
            }
            guard let fields = self.object(spec, at: here, keys: Self.parameterKeys) else { continue }
            let values = fields["values"].flatMap { stringMap($0, at: here + "/values") }
            var parameter = Parameter(values: values, cardinality: values == nil ? "1" : "*")
            if let separator = optionalString(fields["separator"], at: here + "/separator") {
                if [" ", ",", "|", ";", "+"].contains(separator) {
                    parameter.separator = separator
                } else {
                    defect(here + "/separator", "must be one of ' ', ',', '|', ';', '+'")
                }
            }
            if let cardinality = optionalString(fields["cardinality"], at: here + "/cardinality") {
                if cardinality == "1" || cardinality == "*" {
                    parameter.cardinality = cardinality
                } else {
                    defect(here + "/cardinality", "must be \"1\" or \"*\"")
                }
            }
            if let scope = optionalString(fields["scope"], at: here + "/scope") {
                if scope == "public" { parameter.isPublic = true } else { defect(here + "/scope", "must be \"public\"") }
            }
            _ = optionalString(fields["type"], at: here + "/type")
            parameter.defaultValue = optionalString(fields["default"], at: here + "/default")
            result[name] = parameter
        }
        // A default may name other keyset values (`https://{domain}`), so an operator can
        // override a derived value such as an issuer without the definition changing.
        for (name, parameter) in result.sorted(by: { $0.key < $1.key }) {
            let references = Template.references(in: parameter.defaultValue ?? "")
            if !references.flow.isEmpty { defect(path + "/" + name + "/default", "flow values ({{…}}) cannot be a default") }
            for other in references.keyset.sorted() {
                if result[other] == nil || other == name { defect(path + "/" + name + "/default", "{\(other)} is not another declared parameter") }
                if Parameter.namesSecret(other) { defect(path + "/" + name + "/default", "{\(other)} holds a secret, which a default cannot copy") }
            }
        }
        return result
    }

    /// A flow value may choose an endpoint's host only as the origin or host of a URL whose
    /// endpoint lists the hosts it may name: it comes from callers, callbacks and answers, and
    /// where it chooses the host it chooses who receives the secret or the token. `mayLearn`
    /// marks the endpoints whose callers check that value: both `request`s and OAuth 2's
    /// `access_token`, `refresh` and `revoke`.
    private mutating func checkHost(_ endpoint: Endpoint, _ path: String, mayLearn: Bool) {
        if !endpoint.hosts.isEmpty, !mayLearn {
            defect(path + "/hosts", "only request and OAuth 2 access_token, refresh and revoke endpoints may list hosts")
        }
        guard Template.flowValueChoosesHost(endpoint.url) else {
            if !endpoint.hosts.isEmpty, mayLearn { defect(path + "/hosts", "needs a url whose origin is a flow value ({{instance_url}}/…)") }
            return
        }
        if !mayLearn || endpoint.hosts.isEmpty {
            defect(path + "/url", "a flow value ({{…}}) cannot choose the host unless the endpoint lists the hosts it may name")
        } else if LearnedOrigin(template: endpoint.url) == nil {
            defect(
                path + "/url",
                "a flow value may choose the host only as the whole origin ({{name}}/path) or as the host after a scheme, "
                    + "alone or with fixed text (https://{{name}}/path, https://{{a}}.{{b}}.example.com/path)")
        }
    }

    /// `{x}` must name a declared parameter: anything else would silently render empty.
    private mutating func checkKeysetReferences(oauth2: OAuth2Definition?, oauth1: OAuth1Definition?) {
        func check(_ endpoint: Endpoint?, _ path: String, _ parameters: [String: Parameter], mayLearnHost: Bool = false) {
            guard let endpoint else { return }
            checkHost(endpoint, path, mayLearn: mayLearnHost)
            let texts = [("url", endpoint.url)] + (endpoint.query ?? [:]).map { ("query/\($0.key)", $0.value) }
                + (endpoint.headers ?? [:]).map { ("headers/\($0.key)", $0.value) }
            for (place, text) in texts.sorted(by: { $0.0 < $1.0 }) {
                for name in Template.references(in: text).keyset.sorted() where parameters[name] == nil {
                    defect("\(path)/\(place)", "{\(name)} is not a declared parameter")
                }
            }
        }
        if let oauth2 {
            check(oauth2.authorize, "/oauth2/authorize", oauth2.parameters)
            check(oauth2.accessToken, "/oauth2/access_token", oauth2.parameters, mayLearnHost: true)
            check(oauth2.request, "/oauth2/request", oauth2.parameters, mayLearnHost: true)
            check(oauth2.refresh, "/oauth2/refresh", oauth2.parameters, mayLearnHost: true)
            check(oauth2.revoke, "/oauth2/revoke", oauth2.parameters, mayLearnHost: true)
            check(oauth2.lookup?.endpoint, "/oauth2/lookup", oauth2.parameters)
            check(oauth2.pushedAuthorization, "/oauth2/par", oauth2.parameters)
        }
        if let oauth1 {
            for (endpoint, path) in [(oauth1.requestToken, "request_token"), (oauth1.authorize, "authorize"), (oauth1.accessToken, "access_token")] {
                check(endpoint, "/oauth1/" + path, oauth1.parameters)
            }
            check(oauth1.request, "/oauth1/request", oauth1.parameters, mayLearnHost: true)
        }
    }
}

/// The defects that kept a document from becoming a definition.
public struct DefinitionFailure: Error, Sendable {
    public var defects: [DefinitionDefect]
}

