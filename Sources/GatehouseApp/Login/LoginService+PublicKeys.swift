internal import GatehouseCore
internal import GatehouseCrypto
internal import HTTPServer
internal import JOSE

extension LoginService {
    /// The keyset parameters whose public halves an app publishes, and what each is for.
    static let publishedKeys = [("private_key", "sig"), ("encryption_key", "enc")]

    /// `GET /auth/:provider/jwks?k=APP_KEY`: the JWKS (RFC 7517) of the app's own keys for
    /// this provider, for a provider that reads them from a URL rather than from its console:
    /// `private_key` checks the app's client assertions and request objects, `encryption_key`
    /// is what the provider encrypts id_tokens and UserInfo answers to. Public halves only;
    /// the secret key material never leaves the keyset.
    func publicKeys(_ request: HTTPRequest) async -> HTTPResponse {
        let providerID = request.parameter("provider").lowercased()
        // A Gatehouse extension: its errors are {"error", "error_description"} (interface.md §5).
        guard let appKey = request.queryValue("k"), !appKey.isEmpty else {
            return JSend.withOpenCORS(.error(400, "invalid_request", "k, the app's public key, is required"))
        }
        let keyset: Keyset?
        do throws(RegistryError) {
            _ = try await context.registry.app(key: appKey)
            keyset = try await context.registry.keyset(appKey: appKey, provider: providerID)
        } catch {
            let reason = error.code == .notFound ? "unknown app key" : error.reason
            return JSend.withOpenCORS(.error(error.status, error.code.rawValue, reason))
        }
        guard let keyset else { return JSend.withOpenCORS(.error(404, "not_found", "the app has no keyset for \(providerID)")) }
        var published: [JSONValue] = []
        for (parameter, use) in Self.publishedKeys {
            guard let pem = keyset.parameters[parameter]?.stringValue, let key = try? keys.key(pem, parameter: parameter),
                var members = try? key.publicKey.jwkMembers(), use == "sig" || key.kind.isRSA
            else { continue }
            let keyID = keyset.parameters["key_id"]?.stringValue ?? ""
            members["kid"] = .string(use == "sig" && !keyID.isEmpty ? keyID : Base64URL.encode(Digest.sha256(JSONValue.object(members).serialized())))
            members["use"] = .string(use)
            published.append(.object(members))
        }
        var response = HTTPResponse.json(JSONValue.object(["keys": .array(published)]))
        response.headers.set("Content-Type", "application/jwk-set+json")
        response.headers.set("Cache-Control", "public, max-age=300")
        return JSend.withOpenCORS(response)
    }
}

extension PublicKey {
    /// The key's RFC 7638 members as JSON, for a JWKS entry or a DPoP proof's header.
    func jwkMembers() throws(JOSEError) -> JSONObject {
        try JSONObject(strings: JWK(publicKey: self).requiredMembers)
    }
}

extension KeyKind {
    var isRSA: Bool {
        if case .rsa = self { return true }
        return false
    }
}
