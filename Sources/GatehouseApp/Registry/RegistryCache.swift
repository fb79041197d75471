internal import GatehouseCore
internal import Synchronization

/// Opened apps and keysets for a few seconds. Every login reads its app and keyset two or
/// three times; without this each read is a store query plus an AES-GCM open and a JSON
/// parse. Writes through this process invalidate at once; writes by another process (the
/// CLI, another instance) are seen within `lifetime`.
final class RegistryCache: Sendable {
    static let lifetime: Duration = .seconds(5)

    private struct Entry<Value: Sendable>: Sendable {
        let value: Value
        let expires: ContinuousClock.Instant
    }

    private let apps = Mutex<[String: Entry<App>]>([:])
    /// Keyed by both names rather than one joined string, which would be built (and, at its
    /// length, allocated) on every sign-in just to be hashed.
    private struct KeysetKey: Hashable, Sendable {
        let app: String
        let provider: String
    }

    private let keysets = Mutex<[KeysetKey: Entry<Keyset?>]>([:])

    func app(_ key: String) -> App? {
        let now = ContinuousClock.now
        return apps.withLock { entries in
            guard let entry = entries[key], entry.expires > now else { return nil }
            return entry.value
        }
    }

    func store(_ app: App) {
        let entry = Entry(value: app, expires: ContinuousClock.now + Self.lifetime)
        apps.withLock { entries in
            if entries.count > 10_000 { entries.removeAll() }
            entries[app.key] = entry
        }
    }

    /// `.some(nil)` is a cached "no keyset"; `nil` means not cached.
    func keyset(app: String, provider: String) -> Keyset?? {
        let now = ContinuousClock.now
        return keysets.withLock { entries in
            guard let entry = entries[KeysetKey(app: app, provider: provider)], entry.expires > now else { return nil }
            return .some(entry.value)
        }
    }

    func store(_ keyset: Keyset?, app: String, provider: String) {
        let entry = Entry(value: keyset, expires: ContinuousClock.now + Self.lifetime)
        keysets.withLock { entries in
            if entries.count > 10_000 { entries.removeAll() }
            entries[KeysetKey(app: app, provider: provider)] = entry
        }
    }

    /// Drops everything known about an app, after any change to it or its keysets.
    func invalidate(app key: String) {
        apps.withLock { $0[key] = nil }
        keysets.withLock { entries in entries = entries.filter { $0.key.app != key } }
    }
}
