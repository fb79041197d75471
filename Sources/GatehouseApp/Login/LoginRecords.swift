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

    /// The stored form (`RecordWriter`'s layout 1, fields in declaration order).
    var record: [UInt8] {
        var writer = RecordWriter(layout: Self.layout)
        writer.append(appKey)
        writer.append(provider)
        writer.append(version)
        writer.append(origin)
        writer.append(redirectURI)
        writer.append(redirectType)
        writer.append(mobile)
        writer.append(clientState)
        writer.append(clientMode)
        writer.append(responseType.rawValue)
        writer.append(codeVerifier)
        writer.append(nonce)
        writer.append(requestTokenSecret)
        writer.append(scopeOverride)
        writer.append(createdAt)
        return writer.bytes
    }

    private static let layout: UInt8 = 1

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
        guard var reader = RecordReader(record, layout: Self.layout) else {
            self.init(jsonRecord: record)
            return
        }
        let appKey = reader.requiredString(), provider = reader.requiredString(), version = reader.requiredString()
        let origin = reader.requiredString(), redirectURI = reader.string(), redirectType = reader.string()
        let mobile = reader.flag(), clientState = reader.string(), clientMode = reader.flag()
        let type = ResponseType(rawValue: reader.requiredString())
        let codeVerifier = reader.string(), nonce = reader.string(), requestTokenSecret = reader.string()
        let scopeOverride = reader.string(), createdAt = reader.integer()
        guard reader.finished, let type else { return nil }
        self.init(
            appKey: appKey, provider: provider, version: version, origin: origin, redirectURI: redirectURI,
            redirectType: redirectType, mobile: mobile, clientState: clientState, clientMode: clientMode, responseType: type,
            codeVerifier: codeVerifier, nonce: nonce, requestTokenSecret: requestTokenSecret, scopeOverride: scopeOverride,
            createdAt: createdAt)
    }

    /// The JSON form earlier versions stored, still in the store for up to 20 minutes after
    /// an upgrade (or written by an older process sharing Redis).
    private init?(jsonRecord record: [UInt8]) {
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
/// It keeps the answer `/auth/access_token` gives, already as JSON text: the credentials
/// (refresh token included) with `state` and `provider`, so redeeming parses nothing.
struct LoginCode: Sendable {
    var appKey: String
    var answer: [UInt8]

    init(appKey: String, provider: String, clientState: String?, result: JSONObject) {
        self.appKey = appKey
        answer = JSONValue.serializedObject(
            result, adding: [("state", clientState.map(JSONValue.string) ?? .null), ("provider", .string(provider))])
    }

    /// The stored form (`RecordWriter`'s layout 1): the app key, then the answer to the end.
    var record: [UInt8] {
        var writer = RecordWriter(layout: Self.layout, capacity: answer.count + appKey.utf8.count + 8)
        writer.append(appKey)
        writer.appendRemainder(answer)
        return writer.bytes
    }

    private static let layout: UInt8 = 1

    init?(record: [UInt8]) {
        guard var reader = RecordReader(record, layout: Self.layout) else {
            self.init(jsonRecord: record)
            return
        }
        let appKey = reader.requiredString(), answer = reader.remainder()
        guard reader.finished, !answer.isEmpty else { return nil }
        self.init(appKey: appKey, answer: answer)
    }

    private init(appKey: String, answer: [UInt8]) {
        self.appKey = appKey
        self.answer = answer
    }

    /// The JSON form earlier versions stored (see `LoginState.init(jsonRecord:)`).
    private init?(jsonRecord record: [UInt8]) {
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
