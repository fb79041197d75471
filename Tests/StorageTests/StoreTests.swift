import GatehouseCore
@testable import Storage
import GatehouseTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every backend passes the same suite.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory, sqlite

    var testDescription: String { rawValue }

    func make() throws -> any Store {
        switch self {
        case .memory: MemoryStore()
        case .sqlite: try SQLiteStore(path: TemporaryDirectory.make() + "/store.db")
        }
    }
}

func app(_ key: String, created: Int64 = 1) -> StoredApp {
    StoredApp(key: key, name: "app \(key)", sealedSecret: [1, 2, 3], domains: ["localhost", "*.example.com"], createdAt: created)
}

@Suite("Store")
struct StoreTests {
    @Test("apps: create, read, list, update, delete", arguments: Backend.allCases)
    func apps(backend: Backend) async throws {
        let store = try backend.make()
        try await store.createApp(app("k1", created: 1))
        try await store.createApp(app("k2", created: 2))
        await #expect(throws: StoreError.conflict("")) { try await store.createApp(app("k1")) }
        #expect(try await store.app(key: "k1") == app("k1", created: 1))
        #expect(try await store.app(key: "nope") == nil)
        #expect(try await store.apps().map(\.key) == ["k1", "k2"])
        var changed = app("k1", created: 1)
        changed.name = "renamed"
        changed.domains = []
        #expect(try await store.updateApp(changed))
        #expect(try await store.app(key: "k1")?.name == "renamed")
        #expect(try await store.app(key: "k1")?.domains == [])
        #expect(try await !store.updateApp(app("ghost")))
        #expect(try await store.deleteApp(key: "k1"))
        #expect(try await !store.deleteApp(key: "k1"))
        #expect(try await store.apps().map(\.key) == ["k2"])
        await store.close()
    }

    @Test("keysets belong to an app and go with it", arguments: Backend.allCases)
    func keysets(backend: Backend) async throws {
        let store = try backend.make()
        try await store.createApp(app("k1"))
        let keyset = StoredKeyset(provider: "github", sealedParameters: [9, 9], responseType: .code, updatedAt: 5)
        #expect(try await store.putKeyset(keyset, appKey: "k1"))
        #expect(try await !store.putKeyset(keyset, appKey: "ghost"), "no keyset without an app")
        var replaced = keyset
        replaced.responseType = .both
        #expect(try await store.putKeyset(replaced, appKey: "k1"))
        #expect(try await store.putKeyset(StoredKeyset(provider: "apple", sealedParameters: [1], responseType: .token, updatedAt: 6), appKey: "k1"))
        #expect(try await store.keyset(appKey: "k1", provider: "github") == replaced)
        #expect(try await store.keysets(appKey: "k1").map(\.provider) == ["apple", "github"])
        #expect(try await store.deleteKeyset(appKey: "k1", provider: "apple"))
        #expect(try await !store.deleteKeyset(appKey: "k1", provider: "apple"))
        #expect(try await store.deleteApp(key: "k1"))
        try await store.createApp(app("k1"))
        #expect(try await store.keysets(appKey: "k1").isEmpty, "deleting the app removed its keysets")
        await store.close()
    }

    @Test("records expire, refuse live duplicates and are taken once", arguments: Backend.allCases)
    func records(backend: Backend) async throws {
        let store = try backend.make()
        #expect(try await store.putRecord("s1", value: [1], ttlSeconds: 60))
        #expect(try await !store.putRecord("s1", value: [2], ttlSeconds: 60), "a live record is never overwritten")
        #expect(try await store.record("s1") == [1])
        #expect(try await store.record("s1") == [1], "reading does not consume")
        #expect(try await store.takeRecord("s1") == [1])
        #expect(try await store.takeRecord("s1") == nil)
        #expect(try await store.record("s1") == nil)

        #expect(try await store.putRecord("short", value: [3], ttlSeconds: 1))
        try await Task.sleep(for: .milliseconds(1100))
        #expect(try await store.record("short") == nil)
        #expect(try await store.takeRecord("short") == nil)
        #expect(try await store.putRecord("short", value: [4], ttlSeconds: 60), "an expired id may be reused")
        #expect(try await store.record("short") == [4])
        await store.close()
    }

    @Test("of many concurrent takers exactly one gets the record", arguments: Backend.allCases)
    func takeOnce(backend: Backend) async throws {
        let store = try backend.make()
        for round in 0..<20 {
            #expect(try await store.putRecord("code\(round)", value: [UInt8(round)], ttlSeconds: 60))
            let winners = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<16 {
                    group.addTask { try await store.takeRecord("code\(round)") == nil ? 0 : 1 }
                }
                return try await group.reduce(0, +)
            }
            #expect(winners == 1)
        }
        await store.close()
    }

    @Test("sqlite data survives reopening, and the schema version is recorded")
    func sqlitePersists() async throws {
        let path = TemporaryDirectory.make() + "/nested/dir/store.db"
        let first = try SQLiteStore(path: path)
        try await first.createApp(app("persist"))
        #expect(try await first.putRecord("r", value: [7], ttlSeconds: 60))
        await first.close()
        let second = try SQLiteStore(path: path)
        #expect(try await second.app(key: "persist") != nil)
        #expect(try await second.record("r") == [7])
        try await second.ping()
        await second.close()
    }

    @Test("a database from a newer gatehouse is refused, not guessed at")
    func newerSchemaRefused() async throws {
        let path = TemporaryDirectory.make() + "/store.db"
        let store = try SQLiteStore(path: path)
        await store.close()
        try SQLiteConnection(path: path).executeScript("PRAGMA user_version = 99")
        #expect(throws: StoreError.corrupt("")) { try SQLiteStore(path: path) }
    }

    @Test("a path that cannot be opened is reported as an invalid location")
    func badPath() {
        #expect(throws: StoreError.invalidLocation("")) { try SQLiteStore(path: "/proc/forbidden/store.db") }
    }
}
