internal import GatehouseCore

/// A login in progress, stored under its state id for 20 minutes and taken exactly once by
/// the provider callback. It never holds a client secret: the callback reads the keyset again.
struct LoginState: Sendable {
    var appKey: String
    var provider: String
    var version: String
    /// The page origin that started the flow: where the result may be posted.
    var origin: String
    var redirectURI: String?
    /// `server` asks for a 302 back to `redirectURI` with `?oauthio=`.
    var redirectType: String?
    var mobile: Bool
    /// The app's own state (`opts.state`), echoed back in the result.
    var clientState: String?
    /// True when the SDK made the state itself (`opts.state_type == "client"`): tokens go
    /// straight to the browser and no code is issued.
    var clientMode: Bool
    var responseType: ResponseType
    var codeVerifier: String?
    var nonce: String?
    /// OAuth 1.0a: the request token's secret, needed to sign the access-token call.
    var requestTokenSecret: String?
    /// `opts.scope`, replacing the keyset's scope for this login.
    var scopeOverride: String?
    var createdAt: Int64

    /// The stored form. Records are written and read on every login, so they go through the
    /// core's fast JSON rather than Foundation's coders.
    var record: [UInt8] {
        var object: [String: JSONValue] = [
            "key": .string(appKey), "provider": .string(provider), "version": .string(version), "origin": .string(origin),
            "mobile": .bool(mobile), "client_mode": .bool(clientMode), "response_type": .string(responseType.rawValue),
            "created_at": .number(Double(createdAt)),
        ]
        let optionals: [(String, String?)] = [
            ("redirect_uri", redirectURI), ("redirect_type", redirectType), ("state", clientState), ("code_verifier", codeVerifier),
            ("nonce", nonce), ("request_token_secret", requestTokenSecret), ("scope", scopeOverride),
        ]
        for (key, value) in optionals { if let value { object[key] = .string(value) } }
        return JSONValue.object(object).serialized()
    }

    init(
        appKey: String, provider: String, version: String, origin: String, redirectURI: String?, redirectType: String?, mobile: Bool,
        clientState: String?, clientMode: Bool, responseType: ResponseType, codeVerifier: String?, nonce: String?,
        requestTokenSecret: String?, scopeOverride: String?, createdAt: Int64
    ) {
        self.appKey = appKey
        self.provider = provider
        self.version = version
        self.origin = origin
        self.redirectURI = redirectURI
        self.redirectType = redirectType
        self.mobile = mobile
        self.clientState = clientState
        self.clientMode = clientMode
        self.responseType = responseType
        self.codeVerifier = codeVerifier
        self.nonce = nonce
        self.requestTokenSecret = requestTokenSecret
        self.scopeOverride = scopeOverride
        self.createdAt = createdAt
    }

    /// Reads a stored record; nil if it is damaged.
    init?(record: [UInt8]) {
        guard let object = JSONValue.parse(record)?.objectValue, let appKey = object["key"]?.stringValue,
            let provider = object["provider"]?.stringValue, let version = object["version"]?.stringValue,
            let origin = object["origin"]?.stringValue, let type = object["response_type"]?.stringValue.flatMap(ResponseType.init(rawValue:))
        else { return nil }
        guard case .number(let created)? = object["created_at"] else { return nil }
        self.init(
            appKey: appKey, provider: provider, version: version, origin: origin, redirectURI: object["redirect_uri"]?.stringValue,
            redirectType: object["redirect_type"]?.stringValue, mobile: object["mobile"]?.boolValue ?? false,
            clientState: object["state"]?.stringValue, clientMode: object["client_mode"]?.boolValue ?? true, responseType: type,
            codeVerifier: object["code_verifier"]?.stringValue, nonce: object["nonce"]?.stringValue,
            requestTokenSecret: object["request_token_secret"]?.stringValue, scopeOverride: object["scope"]?.stringValue,
            createdAt: Int64(created))
    }
}

/// A finished server-side login waiting for the app backend to redeem its one-time code.
struct LoginCode: Sendable {
    var appKey: String
    var provider: String
    var clientState: String?
    /// The credentials, refresh token included, exactly as `/auth/access_token` returns them.
    var result: [String: JSONValue]

    var record: [UInt8] {
        var object: [String: JSONValue] = ["key": .string(appKey), "provider": .string(provider), "result": .object(result)]
        if let clientState { object["state"] = .string(clientState) }
        return JSONValue.object(object).serialized()
    }

    init(appKey: String, provider: String, clientState: String?, result: [String: JSONValue]) {
        self.appKey = appKey
        self.provider = provider
        self.clientState = clientState
        self.result = result
    }

    init?(record: [UInt8]) {
        guard let object = JSONValue.parse(record)?.objectValue, let appKey = object["key"]?.stringValue,
            let provider = object["provider"]?.stringValue, let result = object["result"]?.objectValue
        else { return nil }
        self.init(appKey: appKey, provider: provider, clientState: object["state"]?.stringValue, result: result)
    }
}

/// Record ids in the shared store, namespaced so states and codes cannot be confused.
enum LoginRecordID {
    static func state(_ id: String) -> String { "st:" + id }
    /// A one-time code is filed under the app it was issued to, so redeeming it is one atomic
    /// take of an id only that app's key names: the app is authenticated first, and another
    /// app's key cannot consume the code.
    static func code(_ id: String, appKey: String) -> String { "code:" + appKey + ":" + id }
}
