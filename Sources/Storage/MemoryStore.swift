public import GatehouseCore

/// A store that lives and dies with the process: for tests, benchmarks and throwaway runs.
public actor MemoryStore: Store {
    private var appsByKey: [String: StoredApp] = [:]
    private var appOrder: [String] = []
    private var keysetsByApp: [String: [String: StoredKeyset]] = [:]
    private var records: [String: (value: [UInt8], expiresAt: Int64)] = [:]
    private var putsSincePurge = 0

    public init() {}

    public func createApp(_ app: StoredApp) throws(StoreError) {
        guard appsByKey[app.key] == nil else { throw .conflict("an app with this key exists") }
        appsByKey[app.key] = app
        appOrder.append(app.key)
    }

    public func app(key: String) -> StoredApp? { appsByKey[key] }

    public func apps() -> [StoredApp] { appOrder.compactMap { appsByKey[$0] } }

    public func updateApp(_ app: StoredApp) -> Bool {
        guard appsByKey[app.key] != nil else { return false }
        appsByKey[app.key] = app
        return true
    }

    public func deleteApp(key: String) -> Bool {
        guard appsByKey.removeValue(forKey: key) != nil else { return false }
        appOrder.removeAll { $0 == key }
        keysetsByApp[key] = nil
        return true
    }

    public func putKeyset(_ keyset: StoredKeyset, appKey: String) -> Bool {
        guard appsByKey[appKey] != nil else { return false }
        keysetsByApp[appKey, default: [:]][keyset.provider] = keyset
        return true
    }

    public func keyset(appKey: String, provider: String) -> StoredKeyset? {
        keysetsByApp[appKey]?[provider]
    }

    public func keysets(appKey: String) -> [StoredKeyset] {
        (keysetsByApp[appKey] ?? [:]).values.sorted { $0.provider < $1.provider }
    }

    public func deleteKeyset(appKey: String, provider: String) -> Bool {
        keysetsByApp[appKey]?.removeValue(forKey: provider) != nil
    }

    public func putRecord(_ id: String, value: [UInt8], ttlSeconds: Int) -> Bool {
        let now = SQLiteStore.nowMilliseconds()
        putsSincePurge += 1
        if putsSincePurge >= 512 {
            putsSincePurge = 0
            records = records.filter { $0.value.expiresAt > now }
        }
        if let existing = records[id], existing.expiresAt > now { return false }
        records[id] = (value, now + Int64(ttlSeconds) * 1000)
        return true
    }

    public func record(_ id: String) -> [UInt8]? {
        guard let entry = records[id], entry.expiresAt > SQLiteStore.nowMilliseconds() else { return nil }
        return entry.value
    }

    public func takeRecord(_ id: String) -> [UInt8]? {
        guard let entry = records.removeValue(forKey: id), entry.expiresAt > SQLiteStore.nowMilliseconds() else {
            return nil
        }
        return entry.value
    }

    public func ping() {}

    public func close() {}
}
