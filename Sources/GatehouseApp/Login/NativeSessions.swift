internal import GatehouseCore
internal import GatehouseCrypto
internal import JOSE
internal import ProviderEngine

/// The profile behind a native sign-in (Apple, carrier one-click), kept so that
/// `GET /auth/:provider/me` can answer for providers that have no profile endpoint of their
/// own. The record is found by the SHA-256 of the access token the sign-in returned, so the
/// store never holds a usable token, and it lives as long as that token does.
struct NativeSession: Sendable {
    var appKey: String
    var provider: String
    /// The unified profile, `raw` included, exactly as the sign-in returned it as `user`.
    var profile: JSONValue
    /// When the sign-in happened (seconds since the epoch), to tell it from a later unlink.
    var signedInAt: Int64

    var record: [UInt8] {
        JSONValue.object([
            "key": .string(appKey), "provider": .string(provider), "profile": profile, "at": .number(Double(signedInAt)),
        ]).serialized()
    }

    init(appKey: String, provider: String, profile: JSONValue, signedInAt: Int64 = Timestamp.now()) {
        self.appKey = appKey
        self.provider = provider
        self.profile = profile
        self.signedInAt = signedInAt
    }

    init?(record: [UInt8]) {
        guard let object = JSONValue.parse(record)?.objectValue, let appKey = object["key"]?.stringValue,
            let provider = object["provider"]?.stringValue, let profile = object["profile"]
        else { return nil }
        // Records written before `at` existed count as the oldest sign-ins.
        let signedInAt = object["at"]?.numberValue.flatMap { $0 >= 0 && $0 < 1e12 ? Int64($0) : nil } ?? 0
        self.init(appKey: appKey, provider: provider, profile: profile, signedInAt: signedInAt)
    }

    static func recordID(token: String) -> String {
        "native:" + Hex.encode(Digest.sha256(Array(token.utf8)))
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

/// Why `me` could not produce a native provider's profile.
struct NativeProfileProblem: Error, Sendable {
    var status: Int
    var message: String
}

extension LoginService {
    /// The unified profile `me` answers for a provider signed in natively, which has no
    /// profile endpoint to call: the profile recorded under the token the sign-in returned or,
    /// for Apple with only an identity token, that token verified again (it is short-lived and
    /// self-contained, so nothing is stored per verification).
    func nativeProfile(
        provider: String, definition: ProviderDefinition, appKey: String, token: String?, idToken: String?
    ) async -> Result<JSONValue, NativeProfileProblem> {
        let unlinked = NativeProfileProblem(status: 401, message: "the user has since stopped using Sign in with Apple with this app")
        for candidate in [token, idToken].compactMap({ $0 }) where !candidate.isEmpty {
            do throws(StoreError) {
                if let session = try await nativeSession(token: candidate, provider: provider), session.appKey == appKey {
                    if AppleSignIn.isApple(definition), let subject = session.profile["id"]?.stringValue,
                        await appleUnlinked(appKey: appKey, subject: subject, since: session.signedInAt)
                    {
                        _ = try? await context.store.takeRecord(NativeSession.recordID(token: candidate))
                        return .failure(unlinked)
                    }
                    return .success(session.profile)
                }
            } catch {
                return .failure(NativeProfileProblem(status: 503, message: "the store is unavailable"))
            }
        }
        guard AppleSignIn.isApple(definition), let idToken, !idToken.isEmpty else {
            return .failure(NativeProfileProblem(status: 401, message: "unknown or expired token"))
        }
        guard let keyset = try? await context.registry.keyset(appKey: appKey, provider: provider) else {
            return .failure(NativeProfileProblem(status: 400, message: "the app has no keyset for \(provider)"))
        }
        do throws(AppleError) {
            let claims = try await apple.verify(
                idToken, definition: definition, audiences: AppleSignIn.audiences(keyset.parameters), nonce: .notCompared,
                authorizationCode: nil)
            if await appleUnlinked(appKey: appKey, subject: claims.sub ?? "", since: claims.iat ?? 0) { return .failure(unlinked) }
            let name = await rememberName(nil, appKey: appKey, subject: claims.sub ?? "")
            return .success(AppleSignIn.profile(claims, name: name))
        } catch {
            return .failure(NativeProfileProblem(status: error.status == 502 ? 502 : 401, message: error.reason))
        }
    }
}

extension LoginService {
    /// How long an unlink is remembered: longer than any session or identity token it ends.
    static let appleUnlinkSeconds = 86_400

    static func appleUnlinkID(appKey: String, subject: String) -> String {
        "apple-unlinked:\(appKey):\(subject)"
    }

    /// Records that `subject` stopped using Sign in with Apple with the app (consent revoked,
    /// account deleted) at `time`, ending what earlier sign-ins left for `me`.
    func recordAppleUnlink(appKey: String, subject: String, at time: Int64) async {
        let id = Self.appleUnlinkID(appKey: appKey, subject: subject)
        _ = try? await context.store.takeRecord(id)
        _ = try? await context.store.putRecord(id, value: Array(String(time).utf8), ttlSeconds: Self.appleUnlinkSeconds)
    }

    /// True if `subject` unlinked the app at or after `since`; a sign-in after that stands.
    func appleUnlinked(appKey: String, subject: String, since: Int64) async -> Bool {
        guard let bytes = try? await context.store.record(Self.appleUnlinkID(appKey: appKey, subject: subject)),
            let time = Int64(String(decoding: bytes, as: UTF8.self))
        else { return false }
        return time >= since
    }
}
