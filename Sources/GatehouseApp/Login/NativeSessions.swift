internal import GatehouseCore
internal import GatehouseCrypto

/// The profile behind a native sign-in (Apple, carrier one-click), kept so that
/// `GET /auth/:provider/me` can answer for providers that have no profile endpoint of their
/// own. The record is found by the SHA-256 of the access token the sign-in returned, so the
/// store never holds a usable token, and it lives as long as that token does.
struct NativeSession: Sendable {
    var appKey: String
    var provider: String
    /// The unified profile, `raw` included, exactly as the sign-in returned it as `user`.
    var profile: JSONValue

    var record: [UInt8] {
        JSONValue.object(["key": .string(appKey), "provider": .string(provider), "profile": profile]).serialized()
    }

    init(appKey: String, provider: String, profile: JSONValue) {
        self.appKey = appKey
        self.provider = provider
        self.profile = profile
    }

    init?(record: [UInt8]) {
        guard let object = JSONValue.parse(record)?.objectValue, let appKey = object["key"]?.stringValue,
            let provider = object["provider"]?.stringValue, let profile = object["profile"]
        else { return nil }
        self.init(appKey: appKey, provider: provider, profile: profile)
    }

    static func recordID(token: String) -> String {
        "native:" + AppleSignIn.hex(Digest.sha256(Array(token.utf8)))
    }
}

extension LoginService {
    /// How long a Gatehouse-issued native access token (and its profile) stays usable.
    static let nativeSessionSeconds = 3600

    /// Records `session` under `token` (the provider's own access token) or, when the provider
    /// issued none, under a fresh Gatehouse token. Returns the token to hand to the caller.
    func rememberNativeSession(_ session: NativeSession, token: String? = nil, ttlSeconds: Int = nativeSessionSeconds)
        async throws(StoreError) -> String?
    {
        guard let token = token ?? (try? SecureRandom.identifier()) else { return nil }
        let id = NativeSession.recordID(token: token)
        // A provider token presented again finds its record already there, which is fine:
        // it stands for the same sign-in.
        _ = try await putSealed(session.record, id: id, ttlSeconds: ttlSeconds)
        return token
    }

    /// The session a native access token stands for, if it is live and belongs to `provider`.
    func nativeSession(token: String, provider: String) async throws(StoreError) -> NativeSession? {
        guard let bytes = try await readSealed(NativeSession.recordID(token: token)),
            let session = NativeSession(record: bytes), session.provider == provider
        else { return nil }
        return session
    }
}
