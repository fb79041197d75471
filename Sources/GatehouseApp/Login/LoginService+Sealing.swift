internal import GatehouseCore
internal import GatehouseCrypto

extension LoginService {
    /// Short-lived records hold tokens, PKCE verifiers and request-token secrets, so they are
    /// sealed with the master key like every other secret at rest; the record id is bound as
    /// context, so a sealed record copied under another id does not open.
    func seal(_ bytes: [UInt8], id: String) -> [UInt8]? {
        try? context.registry.box.seal(bytes, context: "record:" + id)
    }

    func open(_ sealed: [UInt8]?, id: String) -> [UInt8]? {
        guard let sealed else { return nil }
        return try? context.registry.box.open(sealed, context: "record:" + id)
    }

    /// Stores a sealed record; false if it could not be sealed or the id is taken. A login
    /// state or one-time code (`oneTime`) is a record taken once, under a fresh random id,
    /// which a store may acknowledge before it is durable (`Store.putOneTimeRecord`).
    func putSealed(_ bytes: [UInt8], id: String, ttlSeconds: Int, oneTime: Bool = false) async throws(StoreError) -> Bool {
        guard let sealed = seal(bytes, id: id) else { return false }
        if oneTime { return try await context.store.putOneTimeRecord(id, value: sealed, ttlSeconds: ttlSeconds) }
        return try await context.store.putRecord(id, value: sealed, ttlSeconds: ttlSeconds)
    }

    func readSealed(_ id: String) async throws(StoreError) -> [UInt8]? {
        open(try await context.store.record(id), id: id)
    }

    func takeSealed(_ id: String) async throws(StoreError) -> [UInt8]? {
        open(try await context.store.takeRecord(id), id: id)
    }
}
