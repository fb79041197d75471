/// An app row as a store keeps it: the secret sealed by the registry, never in clear.
public struct StoredApp: Sendable, Hashable {
    public var key: String
    public var name: String
    /// The app secret sealed with the master key (AES-256-GCM); opaque to the store.
    public var sealedSecret: [UInt8]
    public var domains: [String]
    public var createdAt: Int64

    public init(key: String, name: String, sealedSecret: [UInt8], domains: [String], createdAt: Int64) {
        self.key = key
        self.name = name
        self.sealedSecret = sealedSecret
        self.domains = domains
        self.createdAt = createdAt
    }
}

/// A keyset row as a store keeps it: the parameters, secrets included, sealed as one blob.
public struct StoredKeyset: Sendable, Hashable {
    public var provider: String
    /// The JSON parameters sealed with the master key; opaque to the store.
    public var sealedParameters: [UInt8]
    public var responseType: ResponseType
    public var updatedAt: Int64
    /// `Keyset.deviceSignIn`.
    public var deviceSignIn: Bool

    public init(provider: String, sealedParameters: [UInt8], responseType: ResponseType, updatedAt: Int64, deviceSignIn: Bool = true) {
        self.provider = provider
        self.sealedParameters = sealedParameters
        self.responseType = responseType
        self.updatedAt = updatedAt
        self.deviceSignIn = deviceSignIn
    }
}

/// Where apps, keysets and short-lived flow records live. One process uses the embedded
/// SQLite store; many share Redis. Every backend passes the same test suite.
///
/// Short-lived records (login states, one-time codes) carry a TTL and are read back either
/// with `record(_:)`, which leaves them, or `takeRecord(_:)`, which removes them atomically so
/// that two racing redemptions cannot both succeed.
public protocol Store: Sendable {
    /// Adds an app; fails with `StoreError.conflict` if the key exists.
    func createApp(_ app: StoredApp) async throws(StoreError)
    /// The app with this public key, or nil.
    func app(key: String) async throws(StoreError) -> StoredApp?
    /// Every app, oldest first.
    func apps() async throws(StoreError) -> [StoredApp]
    /// Replaces an existing app's row; returns false if there is no such app.
    func updateApp(_ app: StoredApp) async throws(StoreError) -> Bool
    /// Removes an app and its keysets; returns false if there was no such app.
    func deleteApp(key: String) async throws(StoreError) -> Bool

    /// Adds or replaces the keyset for `keyset.provider`; returns false if the app is unknown.
    func putKeyset(_ keyset: StoredKeyset, appKey: String) async throws(StoreError) -> Bool
    /// The app's keyset for a provider, or nil.
    func keyset(appKey: String, provider: String) async throws(StoreError) -> StoredKeyset?
    /// All keysets of an app, ordered by provider id.
    func keysets(appKey: String) async throws(StoreError) -> [StoredKeyset]
    /// Removes one keyset; returns false if there was none.
    func deleteKeyset(appKey: String, provider: String) async throws(StoreError) -> Bool

    /// Stores a record that expires after `ttlSeconds`. Returns false, storing nothing, when a
    /// live record already has this id: ids are random, so a clash means misuse.
    func putRecord(_ id: String, value: [UInt8], ttlSeconds: Int) async throws(StoreError) -> Bool
    /// Stores a record that is taken once and never replaced: a login state or a one-time
    /// code, under a fresh random id. Same answer as `putRecord`, but a backend may answer
    /// before the record is durable, provided this process's later `record` and `takeRecord`
    /// see it; the SQLite store does (see `SQLiteStore`).
    func putOneTimeRecord(_ id: String, value: [UInt8], ttlSeconds: Int) async throws(StoreError) -> Bool
    /// Reads a live record without removing it.
    func record(_ id: String) async throws(StoreError) -> [UInt8]?
    /// Removes and returns a live record in one atomic step; nil if absent or expired.
    func takeRecord(_ id: String) async throws(StoreError) -> [UInt8]?

    /// Spends one token of the bucket `name`, which holds `rule.capacity` and refills at
    /// `rule.perSecond`. Returns nil if a token was there, else the whole seconds until one will
    /// be. A shared backend (Redis) shares its buckets between every process that uses it.
    func spendToken(_ name: String, rule: BucketRule) async throws(StoreError) -> Int?

    /// Answers once the backend can serve requests; throws when it cannot (for `/readyz`).
    func ping() async throws(StoreError)
    /// Releases connections. The store is unusable afterwards.
    func close() async
}
