internal import GatehouseCore

extension DefinitionReader {
    /// `openid`: whose id_tokens a login accepts. The issuer and key set may name the keyset's
    /// tenant; HMAC algorithms need no key set.
    mutating func openIDDefinition(_ value: JSONValue, parameters: [String: Parameter]) -> OpenIDDefinition? {
        guard let object = object(value, at: "/openid", keys: ["issuer", "jwks_uri", "algorithms", "encrypted"]) else { return nil }
        let encrypted = optionalBool(object["encrypted"], at: "/openid/encrypted") ?? false
        if encrypted, parameters["encryption_key"] == nil {
            defect("/openid/encrypted", "encrypted tokens are opened with the keyset's encryption_key: declare it")
        }
        let issuer = requiredString(object["issuer"], at: "/openid/issuer")
        // Kept exactly as written: some key sets live at a path ending in "/" (authentik).
        var jwks = optionalString(object["jwks_uri"], at: "/openid/jwks_uri")
        if let text = jwks, !text.hasPrefix("https://"), !text.hasPrefix("http://") {
            defect("/openid/jwks_uri", "must be an absolute http(s) URL")
            jwks = nil
        }
        for (key, text) in [("issuer", issuer), ("jwks_uri", jwks)] {
            guard let text else { continue }
            let references = Template.references(in: text)
            // The keys that vouch for a login must be the operator's choice, never the login's.
            if !references.flow.isEmpty { defect("/openid/\(key)", "flow values ({{…}}) cannot name the issuer or its keys") }
            for name in references.keyset.sorted() {
                if parameters[name] == nil { defect("/openid/\(key)", "{\(name)} is not a declared parameter") }
                // A refusal names the issuer it expected, so a secret there would reach the caller.
                if Parameter.namesSecret(name) { defect("/openid/\(key)", "{\(name)} holds a secret, which cannot name the issuer or its keys") }
            }
        }
        var algorithms = ["RS256"]
        if let list = object["algorithms"] {
            algorithms = stringList(list, at: "/openid/algorithms") ?? algorithms
            let supported = OpenIDDefinition.macAlgorithms.union(Self.keyAlgorithms)
            for (index, algorithm) in algorithms.enumerated() where !supported.contains(algorithm) {
                defect("/openid/algorithms/\(index)", "unsupported algorithm '\(algorithm)'")
            }
        }
        let onlyMACs = !algorithms.isEmpty && algorithms.allSatisfy(OpenIDDefinition.macAlgorithms.contains)
        if object["jwks_uri"] == nil, !onlyMACs { defect("/openid/jwks_uri", "required unless every algorithm is an HMAC one (HS256, HS384, HS512)") }
        guard let issuer, jwks != nil || onlyMACs else { return nil }
        return OpenIDDefinition(issuer: issuer, jwksURI: jwks, algorithms: algorithms, encrypted: encrypted)
    }
}
