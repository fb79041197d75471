internal import GatehouseCore
internal import GatehouseCrypto
internal import JOSE
internal import ProviderEngine

/// Sign in with Apple on top of the generic flows: the minted client_secret, Apple's
/// identity-token rules (apple.md §2) and the first-login name.
struct AppleSignIn: Sendable {
    let secrets = AppleClientSecret()
    let keys: JWKSCache

    /// Apple's clock leeway: issuers and devices drift; 60 s is the common, tested choice.
    static let leeway: Int64 = 60

    static func isApple(_ definition: ProviderDefinition) -> Bool {
        definition.native?["kind"]?.stringValue == "apple"
    }

    /// Every audience the app accepts: its bundle ids (`client_ids`), its Services ID and the
    /// keyset's `client_id`.
    static func audiences(_ keyset: JSONObject) -> [String] {
        // Runs per sign-in over a handful of ids: a linear duplicate check and a byte-level
        // split cost less than a Set and a walk over Characters.
        var result: [String] = []
        func keep(_ audience: String) {
            if !audience.isEmpty, !result.contains(audience) { result.append(audience) }
        }
        func add(_ value: JSONValue?) {
            switch value {
            case .string(let text)?:
                let isSeparator = { (byte: UInt8) in byte == UInt8(ascii: ",") || byte == UInt8(ascii: " ") }
                // Most keysets hold one id per parameter: that needs no split and no copy.
                guard text.utf8.contains(where: isSeparator) else { return keep(text) }
                for piece in text.utf8.split(whereSeparator: isSeparator) { keep(String(Substring(piece))) }
            case .array(let items)?:
                for item in items { if let text = item.stringValue { keep(text) } }
            default: break
            }
        }
        add(keyset["client_ids"])
        add(keyset["services_id"])
        add(keyset["client_id"])
        return result
    }

    /// The client_id of a web sign-in: the Services ID when the keyset names one (apple.md §1),
    /// else its `client_id`. The authorize step and the code exchange must agree on it, or
    /// Apple refuses the code as issued to another client.
    static func webClientID(_ keyset: JSONObject) -> String {
        keyset["services_id"]?.stringValue ?? keyset["client_id"]?.stringValue ?? ""
    }

    /// The keyset with `client_id` set to `clientID` (the web client_id when nil) and a fresh
    /// `client_secret` for it. A caller-chosen `clientID` must be one of the app's audiences.
    func prepared(_ keyset: JSONObject, definition: ProviderDefinition, clientID: String? = nil) async throws(AppleError)
        -> JSONObject
    {
        if let clientID, !Self.audiences(keyset).contains(clientID) {
            throw .configuration("client_id is not one of the app's client ids")
        }
        var parameters = keyset
        parameters["client_id"] = .string(clientID ?? Self.webClientID(keyset))
        guard let identity = Self.secretIdentity(parameters, definition: definition), let pem = keyset["private_key"]?.stringValue else {
            if keyset["client_secret"] != nil { return parameters }
            throw .configuration("the apple keyset needs team_id, key_id and private_key")
        }
        parameters["client_secret"] = .string(try await secrets.secret(for: identity, privateKeyPEM: pem))
        return parameters
    }

    /// Drops the client_secret minted for `prepared` parameters after Apple answered
    /// `invalid_client` to it (apple.md §3), so the next call signs a fresh one.
    func forgetSecret(_ prepared: JSONObject, definition: ProviderDefinition) async {
        guard let identity = Self.secretIdentity(prepared, definition: definition) else { return }
        await secrets.invalidate(identity)
    }

    private static func secretIdentity(_ parameters: JSONObject, definition: ProviderDefinition) -> AppleClientSecret.Identity? {
        guard let team = parameters["team_id"]?.stringValue, let keyID = parameters["key_id"]?.stringValue,
            let pem = parameters["private_key"]?.stringValue, let client = parameters["client_id"]?.stringValue
        else { return nil }
        return AppleClientSecret.Identity(
            teamID: team, keyID: keyID, clientID: client, audience: definition.openid?.issuer ?? "https://appleid.apple.com",
            keyFingerprint: Hex.encode(Digest.sha256(Array(pem.utf8))))
    }

    /// What a verification asks of the token's `nonce` claim.
    enum NonceRule: Sendable {
        /// A sign-in with the request's nonce: a nonce sent must be the token's (raw, or the
        /// SHA-256 hex the iOS convention sends), and a token carrying one needs it sent, or a
        /// captured token would replay by leaving the nonce out (apple.md §2, step 5).
        case signIn(String?)
        /// Reading a token again that a sign-in accepted (`me`, the token Apple's code exchange
        /// returns): its nonce was that sign-in's business.
        case notCompared
    }

    /// Verifies an identity token: RS256 only, Apple's issuer, an allowed audience, times with
    /// leeway, the nonce as `nonceRule` says, and `c_hash` against the authorization code when
    /// both are present.
    func verify(
        _ token: String, definition: ProviderDefinition, audiences: [String], nonce nonceRule: NonceRule,
        authorizationCode: String?
    ) async throws(AppleError) -> JWTClaims {
        guard let openid = definition.openid, let jwksURI = openid.jwksURI else {
            throw .configuration("the apple definition has no openid block with a jwks_uri")
        }
        guard !audiences.isEmpty else { throw .configuration("the apple keyset names no client_id, services_id or client_ids") }
        var verifier = JWTVerifier(issuer: openid.issuer, audiences: audiences, algorithms: [.rs256], leeway: Self.leeway)
        verifier.requiresKeyID = true
        let claims: JWTClaims
        do throws(JOSEError) {
            claims = try await verifier.verify(token, using: keys, url: jwksURI)
        } catch {
            throw .invalidToken(error.reason)
        }
        guard let subject = claims.sub, !subject.isEmpty else { throw .invalidToken("no subject") }
        if case .signIn(let sent) = nonceRule {
            switch (sent, claims.nonce) {
            case (nil, nil): break
            case (nil, _?): throw .invalidToken("the token is bound to a nonce and the request sent none")
            case (_?, nil): throw .invalidToken("the nonce is missing")
            case (let expected?, let actual?):
                let hashed = Hex.encode(Digest.sha256(Array(expected.utf8)))
                guard ConstantTime.equals(actual, expected) || ConstantTime.equals(actual, hashed) else {
                    throw .invalidToken("the nonce does not match")
                }
            }
        }
        if let code = authorizationCode, let cHash = claims.raw["c_hash"]?.stringValue {
            let expected = Base64URL.encode(Digest.sha256(Array(code.utf8)).prefix(16))
            guard ConstantTime.equals(cHash, expected) else { throw .invalidToken("c_hash does not match the authorization code") }
        }
        return claims
    }

    /// The app's optional `minimum_real_user_status` policy (apple.md §2: 0 unsupported,
    /// 1 unknown, 2 likely real). The default, 0, blocks nobody: Apple itself says not to
    /// block on 1, and web sign-ins carry no status at all, so a missing claim passes.
    static func checkRealUserStatus(_ claims: JWTClaims, keyset: JSONObject) throws(AppleError) {
        let minimum: Int
        switch keyset["minimum_real_user_status"] {
        case .string(let text)?: minimum = Int(text) ?? 0
        case .number(let value)?: minimum = Int(value)
        default: minimum = 0
        }
        guard minimum > 0, case .number(let status)? = claims.raw["real_user_status"] else { return }
        guard Int(status) >= minimum else {
            throw AppleError(status: 403, reason: "real_user_status \(Int(status)) is below the app's minimum \(minimum)")
        }
    }

    /// The name a native sign-in offers. `user` is either Apple's first-login JSON or, as
    /// the iOS credential has it, the user identifier, which must then be the token's
    /// subject (apple.md §2, step 5); `given_name` and `family_name` may carry the name too.
    static func offeredName(user: String?, givenName: String?, familyName: String?, claims: JWTClaims) throws(AppleError)
        -> PersonName?
    {
        if let user, !user.isEmpty, user.utf8.first != UInt8(ascii: "{") {
            guard user == claims.sub else { throw .invalidToken("user is not the token's subject") }
            return PersonName(first: givenName, last: familyName)
        }
        return PersonName(appleUser: user) ?? PersonName(first: givenName, last: familyName)
    }

    /// The unified profile from verified claims plus the first-login name. The email comes
    /// only from the signed token: the `user` JSON is unsigned (apple.md §4).
    static func profile(_ claims: JWTClaims, name: PersonName?) -> JSONValue {
        // Sized for every member it may get, so adding them never regrows it.
        var profile = JSONObject(minimumCapacity: 7)
        profile["id"] = .string(claims.sub ?? "")
        if let email = claims.email, !email.isEmpty {
            profile["email"] = .string(email)
            profile["email_verified"] = .bool(claims.flag("email_verified") ?? false)
        }
        if let name {
            if let first = name.first { profile["firstname"] = .string(first) }
            if let last = name.last { profile["lastname"] = .string(last) }
            let full = [name.first, name.last].compactMap { $0 }.joined(separator: " ")
            if !full.isEmpty { profile["name"] = .string(full) }
        }
        profile["raw"] = claims.raw
        return .object(profile)
    }
}

/// A first-login name, as Apple's `user` JSON (`{"name":{"firstName","lastName"}}`) or the
/// app's `given_name`/`family_name` carry it. Empty parts are dropped, never stored.
struct PersonName: Codable, Sendable, Equatable {
    var first: String?
    var last: String?

    init?(first: String?, last: String?) {
        let cleanFirst = first.flatMap { $0.isEmpty ? nil : String($0.prefix(200)) }
        let cleanLast = last.flatMap { $0.isEmpty ? nil : String($0.prefix(200)) }
        guard cleanFirst != nil || cleanLast != nil else { return nil }
        self.first = cleanFirst
        self.last = cleanLast
    }

    /// Reads Apple's `user` JSON string; nil if it carries no name.
    init?(appleUser text: String?) {
        guard let text, text.utf8.count <= 4096, let object = JSONValue.parse(Array(text.utf8)),
            let name = object["name"]
        else { return nil }
        self.init(first: name["firstName"]?.stringValue, last: name["lastName"]?.stringValue)
    }
}
