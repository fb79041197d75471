internal import GatehouseCore
internal import GatehouseCrypto
internal import JOSE

/// The parts of the `oauth2` block beyond plain endpoints: what the token step exports, the
/// call made after it, and how the app authenticates there.
extension DefinitionReader {
    /// `oauth2.lookup`: an endpoint (its keys) plus `export`, read with the profile mapping's
    /// expression language, and `optional`.
    mutating func lookup(_ value: JSONValue, base: String?) -> LoginLookup? {
        let path = "/oauth2/lookup"
        guard var members = object(value, at: path, keys: Self.endpointKeys.union(["export", "optional"])) else { return nil }
        let exportValue = members.removeValue(forKey: "export")
        let optional = optionalBool(members.removeValue(forKey: "optional"), at: path + "/optional") ?? false
        // Unknown keys were reported above; the endpoint reader would report them again.
        let endpoint = endpoint(.object(members.filter { Self.endpointKeys.contains($0.key) }), at: path, base: base)
        let export = exports(exportValue, at: path + "/export", base: base, purpose: "the lookup adds")
        guard let endpoint else { return nil }
        return LoginLookup(endpoint: endpoint, export: export, optional: optional)
    }

    /// `oauth2.access_token`: an endpoint, which alone among endpoints may add `export` to take
    /// result fields from a nested part of the token answer.
    mutating func tokenEndpoint(_ value: JSONValue?, base: String?) -> Endpoint? {
        let path = "/oauth2/access_token"
        guard case .object(var members)? = value, let exportValue = members.removeValue(forKey: "export") else {
            return requiredEndpoint(value, at: path, base: base, defaultMethod: "POST")
        }
        let export = exports(exportValue, at: path + "/export", base: base, purpose: "the token answer adds")
        var endpoint = requiredEndpoint(.object(members), at: path, base: base, defaultMethod: "POST")
        endpoint?.export = export
        return endpoint
    }

    /// `export`: result field names mapped to expressions in the profile mapping's language.
    private mutating func exports(_ value: JSONValue?, at path: String, base: String?, purpose: String) -> [String: ProfileExpression] {
        guard let fields = value?.objectValue, !fields.isEmpty else {
            defect(path, "required: an object naming the result fields \(purpose)")
            return [:]
        }
        var export: [String: ProfileExpression] = [:]
        var expressions = ProfileReader(base: base)
        for (name, spec) in fields.sorted(by: { $0.key < $1.key }) {
            if let expression = expressions.expression(spec, at: path + "/" + name) { export[name] = expression }
        }
        defects += expressions.defects
        return export
    }

    /// `client_assertion`, and what `private_key_jwt` needs from the keyset: the key itself.
    mutating func clientAssertion(
        _ value: JSONValue?, authentication: ClientAuthentication, parameters: [String: Parameter]
    ) -> ClientAssertionRule? {
        let path = "/oauth2/client_assertion"
        if authentication == .privateKeyJWT, parameters["private_key"] == nil {
            defect("/oauth2/parameters", "private_key_jwt signs with the keyset's private_key: declare it")
        }
        guard let value else { return nil }
        guard authentication == .privateKeyJWT || authentication == .clientSecretJWT else {
            defect(path, "only with \"client_authentication\": \"private_key_jwt\" or \"client_secret_jwt\"")
            return nil
        }
        guard let members = object(value, at: path, keys: ["audience", "algorithm"]) else { return nil }
        let audience = optionalString(members["audience"], at: path + "/audience")
        for name in Template.references(in: audience ?? "").keyset.sorted() where parameters[name] == nil {
            defect(path + "/audience", "{\(name)} is not a declared parameter")
        }
        let algorithm = optionalString(members["algorithm"], at: path + "/algorithm")
        let allowed = authentication == .clientSecretJWT ? Self.secretAlgorithms : Self.keyAlgorithms
        if let algorithm, !allowed.contains(algorithm) {
            defect(path + "/algorithm", "must be one of " + allowed.joined(separator: ", "))
        }
        return ClientAssertionRule(audience: audience, algorithm: algorithm)
    }

    /// `request_object`: `true` for the defaults, or an object with `algorithm`, `audience`,
    /// `query`, `claims` and `encryption`.
    mutating func requestObject(_ value: JSONValue, parameters: [String: Parameter]) -> RequestObjectRule? {
        let path = "/oauth2/request_object"
        if value == .bool(true) { return requestObject(.object([:]), parameters: parameters) }
        guard let members = object(value, at: path, keys: ["algorithm", "audience", "query", "claims", "encryption"]) else { return nil }
        var rule = RequestObjectRule()
        rule.algorithm = optionalString(members["algorithm"], at: path + "/algorithm")
        if let algorithm = rule.algorithm, !(Self.keyAlgorithms + Self.secretAlgorithms).contains(algorithm) {
            defect(path + "/algorithm", "must be one of " + (Self.keyAlgorithms + Self.secretAlgorithms).joined(separator: ", "))
        }
        let needed = rule.algorithm.map(Self.secretAlgorithms.contains) == true ? "client_secret" : "private_key"
        if parameters[needed] == nil { defect("/oauth2/parameters", "request_object signs with the keyset's \(needed): declare it") }
        rule.audience = optionalString(members["audience"], at: path + "/audience")
        if let query = members["query"] { rule.query = stringList(query, at: path + "/query") ?? rule.query }
        if let claims = members["claims"] {
            guard let object = claims.objectValue else {
                defect(path + "/claims", "must be an object")
                return rule
            }
            rule.claims = object
        }
        if let encryption = members["encryption"] { rule.encryption = requestObjectEncryption(encryption, at: path + "/encryption") }
        let texts = [rule.audience ?? ""] + rule.claims.sorted { $0.key < $1.key }.compactMap(\.value.stringValue)
        for reference in texts.map(Template.references(in:)) {
            for name in reference.keyset.sorted() where parameters[name] == nil { defect(path, "{\(name)} is not a declared parameter") }
            if !reference.flow.isEmpty { defect(path, "flow values ({{…}}) belong in the authorize query, which the request object carries") }
        }
        return rule
    }

    /// `encryption`: `true` for RSA-OAEP-256 and A256GCM, or an object naming `alg` and `enc`.
    private mutating func requestObjectEncryption(_ value: JSONValue, at path: String) -> RequestObjectEncryption? {
        if value == .bool(true) { return RequestObjectEncryption() }
        guard let members = object(value, at: path, keys: ["alg", "enc"]) else { return nil }
        var encryption = RequestObjectEncryption()
        encryption.keyAlgorithm = joseName(members["alg"], at: path + "/alg") ?? encryption.keyAlgorithm
        encryption.contentAlgorithm = joseName(members["enc"], at: path + "/enc") ?? encryption.contentAlgorithm
        return encryption
    }

    /// One of JOSE's algorithm names, if `value` is present and names one.
    private mutating func joseName<Name: RawRepresentable & CaseIterable>(_ value: JSONValue?, at path: String) -> Name?
    where Name.RawValue == String {
        guard let text = optionalString(value, at: path) else { return nil }
        guard let name = Name(rawValue: text) else {
            defect(path, "must be one of " + Name.allCases.map(\.rawValue).joined(separator: ", "))
            return nil
        }
        return name
    }

    static let keyAlgorithms = SignatureAlgorithm.allCases.map(\.rawValue)
    static let secretAlgorithms = OpenIDDefinition.macAlgorithms.sorted()
}
