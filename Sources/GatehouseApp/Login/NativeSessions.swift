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
        for candidate in [token, idToken].compactMap({ $0 }) where !candidate.isEmpty {
            do throws(StoreError) {
                if let session = try await nativeSession(token: candidate, provider: provider), session.appKey == appKey {
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
                idToken, definition: definition, audiences: AppleSignIn.audiences(keyset.parameters), nonce: nil, authorizationCode: nil)
            let name = await rememberName(nil, appKey: appKey, subject: claims.sub ?? "")
            return .success(AppleSignIn.profile(claims, name: name))
        } catch {
            return .failure(NativeProfileProblem(status: error.status == 502 ? 502 : 401, message: error.reason))
        }
    }
}
