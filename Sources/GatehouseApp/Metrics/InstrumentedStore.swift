internal import GatehouseCore

/// Wraps the configured store to time every operation and count its failures for
/// `/metrics`; results pass through untouched. Conflicts are expected answers, not failures,
/// and are not counted as errors.
struct InstrumentedStore: Store {
    let base: any Store
    let metrics: Metrics

    private func counted<T>(_ operation: String, _ body: () async throws(StoreError) -> T) async throws(StoreError) -> T {
        let start = ContinuousClock.now
        defer { metrics.observeStore(operation, ContinuousClock.now - start) }
        do throws(StoreError) {
            return try await body()
        } catch {
            if !error.isConflict { metrics.storeErrors.increment(operation, error.shortDescription) }
            throw error
        }
    }

    func createApp(_ app: StoredApp) async throws(StoreError) { try await counted("create_app") { () async throws(StoreError) in try await base.createApp(app) } }
    func app(key: String) async throws(StoreError) -> StoredApp? { try await counted("app") { () async throws(StoreError) in try await base.app(key: key) } }
    func apps() async throws(StoreError) -> [StoredApp] { try await counted("apps") { () async throws(StoreError) in try await base.apps() } }
    func updateApp(_ app: StoredApp) async throws(StoreError) -> Bool { try await counted("update_app") { () async throws(StoreError) in try await base.updateApp(app) } }
    func deleteApp(key: String) async throws(StoreError) -> Bool { try await counted("delete_app") { () async throws(StoreError) in try await base.deleteApp(key: key) } }

    func spendToken(_ name: String, rule: BucketRule) async throws(StoreError) -> Int? {
        try await counted("spend_token") { () async throws(StoreError) in try await base.spendToken(name, rule: rule) }
    }

    func putKeyset(_ keyset: StoredKeyset, appKey: String) async throws(StoreError) -> Bool {
        try await counted("put_keyset") { () async throws(StoreError) in try await base.putKeyset(keyset, appKey: appKey) }
    }
    func keyset(appKey: String, provider: String) async throws(StoreError) -> StoredKeyset? {
        try await counted("keyset") { () async throws(StoreError) in try await base.keyset(appKey: appKey, provider: provider) }
    }
    func keysets(appKey: String) async throws(StoreError) -> [StoredKeyset] {
        try await counted("keysets") { () async throws(StoreError) in try await base.keysets(appKey: appKey) }
    }
    func deleteKeyset(appKey: String, provider: String) async throws(StoreError) -> Bool {
        try await counted("delete_keyset") { () async throws(StoreError) in try await base.deleteKeyset(appKey: appKey, provider: provider) }
    }

    func putRecord(_ id: String, value: [UInt8], ttlSeconds: Int) async throws(StoreError) -> Bool {
        try await counted("put_record") { () async throws(StoreError) in try await base.putRecord(id, value: value, ttlSeconds: ttlSeconds) }
    }
    func putOneTimeRecord(_ id: String, value: [UInt8], ttlSeconds: Int) async throws(StoreError) -> Bool {
        try await counted("put_record") { () async throws(StoreError) in try await base.putOneTimeRecord(id, value: value, ttlSeconds: ttlSeconds) }
    }
    func record(_ id: String) async throws(StoreError) -> [UInt8]? { try await counted("record") { () async throws(StoreError) in try await base.record(id) } }
    func takeRecord(_ id: String) async throws(StoreError) -> [UInt8]? {
        try await counted("take_record") { () async throws(StoreError) in try await base.takeRecord(id) }
    }

    func ping() async throws(StoreError) { try await counted("ping") { () async throws(StoreError) in try await base.ping() } }
    func close() async { await base.close() }
}
