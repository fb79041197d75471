public import GatehouseCore
internal import Synchronization

/// A store that lives and dies with the process: for tests, benchmarks and throwaway runs.
///
/// A mutex rather than an actor: every operation is a dictionary access, and an actor would
/// make each caller suspend and hop executors for it.
public final class MemoryStore: Store {
    private struct State {
        var appsByKey: [String: StoredApp] = [:]
        var appOrder: [String] = []
        var keysetsByApp: [String: [String: StoredKeyset]] = [:]
        var records: [String: (value: [UInt8], expiresAt: Int64)] = [:]
        var putsSincePurge = 0
    }

    private let state = Mutex(State())
    private let buckets = TokenBuckets()

    public init() {}

    public func createApp(_ app: StoredApp) throws(StoreError) {
        let created = state.withLock { state -> Bool in
            guard state.appsByKey[app.key] == nil else { return false }
            state.appsByKey[app.key] = app
            state.appOrder.append(app.key)
            return true
        }
        guard created else { throw .conflict("an app with this key exists") }
    }

    public func app(key: String) -> StoredApp? { state.withLock { $0.appsByKey[key] } }

    public func apps() -> [StoredApp] { state.withLock { state in state.appOrder.compactMap { state.appsByKey[$0] } } }

    public func updateApp(_ app: StoredApp) -> Bool {
        state.withLock { state in
            guard state.appsByKey[app.key] != nil else { return false }
            state.appsByKey[app.key] = app
            return true
        }
    }

    public func deleteApp(key: String) -> Bool {
        state.withLock { state in
            guard state.appsByKey.removeValue(forKey: key) != nil else { return false }
            state.appOrder.removeAll { $0 == key }
            state.keysetsByApp[key] = nil
            return true
        }
    }

    public func putKeyset(_ keyset: StoredKeyset, appKey: String) -> Bool {
        state.withLock { state in
            guard state.appsByKey[appKey] != nil else { return false }
            state.keysetsByApp[appKey, default: [:]][keyset.provider] = keyset
            return true
        }
    }

    public func keyset(appKey: String, provider: String) -> StoredKeyset? {
        state.withLock { $0.keysetsByApp[appKey]?[provider] }
    }

    public func keysets(appKey: String) -> [StoredKeyset] {
        state.withLock { ($0.keysetsByApp[appKey] ?? [:]).values.sorted { $0.provider < $1.provider } }
    }

    public func deleteKeyset(appKey: String, provider: String) -> Bool {
        state.withLock { $0.keysetsByApp[appKey]?.removeValue(forKey: provider) != nil }
    }

    public func putRecord(_ id: String, value: [UInt8], ttlSeconds: Int) -> Bool {
        let now = SQLiteStore.nowMilliseconds()
        return state.withLock { state in
            state.putsSincePurge += 1
            if state.putsSincePurge >= 512 {
                state.putsSincePurge = 0
                state.records = state.records.filter { $0.value.expiresAt > now }
            }
            if let existing = state.records[id], existing.expiresAt > now { return false }
            state.records[id] = (value, now + Int64(ttlSeconds) * 1000)
            return true
        }
    }

    public func putOneTimeRecord(_ id: String, value: [UInt8], ttlSeconds: Int) -> Bool {
        putRecord(id, value: value, ttlSeconds: ttlSeconds)
    }

    public func record(_ id: String) -> [UInt8]? {
        let now = SQLiteStore.nowMilliseconds()
        return state.withLock { state in
            guard let entry = state.records[id], entry.expiresAt > now else { return nil }
            return entry.value
        }
    }

    public func takeRecord(_ id: String) -> [UInt8]? {
        let now = SQLiteStore.nowMilliseconds()
        return state.withLock { state in
            guard let entry = state.records.removeValue(forKey: id), entry.expiresAt > now else { return nil }
            return entry.value
        }
    }

    public func spendToken(_ name: String, rule: BucketRule) -> Int? {
        buckets.spend(name, rule: rule, now: Double(SQLiteStore.monotonicMilliseconds()) / 1000)
    }

    public func ping() {}

    public func close() {}
}
