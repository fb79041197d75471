import GatehouseCore
@testable import Storage
@testable import RedisStore
import GatehouseTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every backend passes the same suite.
enum Backend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory, sqlite, redis

    var testDescription: String { rawValue }

    func make() async throws -> any Store {
        switch self {
        case .memory: MemoryStore()
        case .sqlite: try SQLiteStore(path: TemporaryDirectory.make() + "/store.db")
        case .redis:
            // A private key prefix per store: tests share one server and reuse app keys.
            // A generous command limit: a loaded test machine is slow, and the 500 ms production
            // limit is exercised by the outage tests instead.
            try await RedisStore(endpoint: redisEndpoint(timeout: .seconds(5)), keyPrefix: "test-\(UInt64.random(in: 0...UInt64.max)):")
        }
    }
}

/// The shared test Redis (GATEHOUSE_TEST_REDIS or one started for this process).
func redisEndpoint(url: String? = nil, timeout: Duration = .milliseconds(500)) async throws -> RedisEndpoint {
    let text: String
    if let url { text = url } else { text = try await RedisServer.sharedURL() }
    let parts = text.dropFirst("redis://".count).split(separator: "/")
    let hostPort = parts[0].split(separator: ":")
    return RedisEndpoint(
        host: String(hostPort[0]), port: Int(hostPort[1]) ?? 6379, database: parts.count > 1 ? Int(parts[1]) ?? 0 : 0, timeout: timeout)
}

func app(_ key: String, created: Int64 = 1) -> StoredApp {
    StoredApp(key: key, name: "app \(key)", sealedSecret: [1, 2, 3], domains: ["localhost", "*.example.com"], createdAt: created)
}

@Suite("Store")
struct StoreTests {
    @Test("apps: create, read, list, update, delete", arguments: Backend.allCases)
    func apps(backend: Backend) async throws {
        let store = try await backend.make()
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
        let store = try await backend.make()
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

    @Test("records, one-time or not, expire, refuse live duplicates and are taken once", arguments: Backend.allCases)
    func records(backend: Backend) async throws {
        let store = try await backend.make()
        for oneTime in [false, true] {
            let put = oneTime ? store.putOneTimeRecord : store.putRecord
            let id = oneTime ? "st:1" : "s1"
            #expect(try await put(id, [1], 60))
            #expect(try await !put(id, [2], 60), "a live record is never overwritten")
            #expect(try await !store.putRecord(id, value: [2], ttlSeconds: 60))
            #expect(try await store.record(id) == [1])
            #expect(try await store.record(id) == [1], "reading does not consume")
            #expect(try await store.takeRecord(id) == [1])
            #expect(try await store.takeRecord(id) == nil)
            #expect(try await store.record(id) == nil)
            #expect(try await put(id, [3], 60), "a taken id may be reused")
            #expect(try await store.takeRecord(id) == [3])
            #expect(try await put("short-\(oneTime)", [4], 1))
        }
        try await Task.sleep(for: .milliseconds(1100))
        for oneTime in [false, true] {
            let put = oneTime ? store.putOneTimeRecord : store.putRecord
            let id = "short-\(oneTime)"
            #expect(try await store.record(id) == nil)
            #expect(try await store.takeRecord(id) == nil)
            #expect(try await put(id, [5], 60), "an expired id may be reused")
            #expect(try await store.record(id) == [5])
        }
        await store.close()
    }

    @Test("sqlite: a second serving store on one file is refused; a CLI store opens beside the server")
    func sqliteOneServer() async throws {
        let path = TemporaryDirectory.make() + "/store.db"
        let server = try SQLiteStore(path: path, serving: true)
        #expect(throws: StoreError.conflict("")) { try SQLiteStore(path: path, serving: true) }
        let cli = try SQLiteStore(path: path)
        await cli.close()
        await server.close()
        let elsewhere = TemporaryDirectory.make() + "/fresh/store.db"
        let other = try SQLiteStore(path: elsewhere, serving: true)
        #expect(FileSystem.exists(elsewhere + ".serve-lock"))
        await other.close()
    }

    @Test("sqlite: one-time records reach the disk unawaited, and so do their takes")
    func sqliteOneTimeRecordsPersist() async throws {
        let path = TemporaryDirectory.make() + "/store.db"
        let store = try SQLiteStore(path: path)
        for index in 0..<100 {
            #expect(try await store.putOneTimeRecord("st:\(index)", value: [UInt8(index)], ttlSeconds: 60))
        }
        for index in 0..<50 {
            #expect(try await store.takeRecord("st:\(index)") == [UInt8(index)])
        }
        // Another process (the CLI's connection stands in) sees the ones left once they have
        // been held for the window, plus the writer's linger.
        let other = try SQLiteConnection(path: path)
        var onDisk = 0
        for _ in 0..<500 {
            onDisk = Int(try other.query("SELECT count(*) FROM records").first?.first?.integer ?? -1)
            if onDisk == 50 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(onDisk == 50)
        // Closing commits whatever is still queued.
        #expect(try await store.putOneTimeRecord("st:last", value: [7], ttlSeconds: 60))
        #expect(try await store.takeRecord("st:60") == [60])
        await store.close()
        let reopened = try SQLiteStore(path: path)
        #expect(try await reopened.takeRecord("st:last") == [7], "found on disk, by the writer's own take")
        #expect(try await reopened.takeRecord("st:60") == nil)
        #expect(try await reopened.takeRecord("st:99") == [99])
        #expect(try await reopened.takeRecord("st:99") == nil)
        await reopened.close()
    }

    @Test("sqlite: behind another process's write lock, a one-time put past the writer's backlog limit waits like any write")
    func oneTimeBacklogBounded() async throws {
        let (store, other) = try storeBehindForeignWriteLock()
        // The writer takes a first write and waits on the lock with it; the rest queue behind.
        let first = Task { try await store.putRecord("first", value: [0], ttlSeconds: 60) }
        try await Task.sleep(for: .milliseconds(100))
        for _ in 0..<300 {
            if store.backlog == 0 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        // One-time records reach the queue only once held for the window; plain writes queue at once.
        let count = SQLiteStore.backlogLimit + 200
        let writes = Task {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<count {
                    group.addTask { try await store.putRecord("w\(index)", value: [UInt8(index % 256)], ttlSeconds: 60) }
                }
                return try await group.reduce(true) { $0 && $1 }
            }
        }
        for _ in 0..<300 {
            if store.backlog >= SQLiteStore.backlogLimit { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(store.backlog >= SQLiteStore.backlogLimit)
        let done = Atomic<Bool>(false)
        let late = Task {
            let stored = try await store.putOneTimeRecord("st:late", value: [1], ttlSeconds: 60)
            done.store(true, ordering: .releasing)
            return stored
        }
        try await Task.sleep(for: .milliseconds(300))
        let answered = done.load(ordering: .acquiring)
        #expect(!answered, "past the limit a one-time put waits for its commit")
        try other.executeScript("COMMIT")
        #expect(try await first.value)
        #expect(try await writes.value)
        #expect(try await late.value)
        #expect(try await store.takeRecord("st:late") == [1])
        #expect(try await store.record("w\(count - 1)") == [UInt8((count - 1) % 256)])
        await store.close()
    }

    @Test("sqlite: a held record reaches the disk only once it outlives the window; one taken sooner never does")
    func heldRecordsWindow() {
        let held = HeldRecords()
        var persisted: [String] = []
        var forgotten = 0
        func entry(_ byte: UInt8, at time: Int64) -> HeldRecords.Entry {
            HeldRecords.Entry(value: [byte], expiresAt: 60_000, heldAt: time)
        }
        #expect(held.hold("early", entry(1, at: 0), now: 0) { id, _ in persisted.append(id) })
        #expect(held.hold("late", entry(2, at: 100), now: 100) { id, _ in persisted.append(id) })
        held.persistDue(now: 499) { id, _ in persisted.append(id) }
        #expect(persisted.isEmpty)
        #expect(held.take("early", now: 450) { forgotten += 1 }?.value == [1])
        #expect(forgotten == 0, "never inserted, so nothing to delete")
        held.persistDue(now: 599) { id, _ in persisted.append(id) }
        #expect(persisted.isEmpty)
        held.persistDue(now: 600) { id, _ in persisted.append(id) }
        #expect(persisted == ["late"])
        held.persistDue(now: 5_000) { id, _ in persisted.append(id) }
        #expect(persisted == ["late"], "persisted once")
        #expect(held.peek("late", now: 700)?.value == [2], "still answered from memory")
        #expect(held.take("late", now: 700) { forgotten += 1 }?.value == [2])
        #expect(forgotten == 1)

        // Closing: whatever is held goes to the disk now, and so does anything held after.
        #expect(held.hold("closing", entry(3, at: 800), now: 800) { id, _ in persisted.append(id) })
        held.persistAll { id, _ in persisted.append(id) }
        #expect(held.hold("after", entry(4, at: 900), now: 900) { id, _ in persisted.append(id) })
        #expect(persisted == ["late", "closing", "after"])
        #expect(held.take("after", now: 950) { forgotten += 1 }?.value == [4])
        #expect(forgotten == 2)
    }

    @Test("sqlite: a full table of held records lets one go, and it is still taken from disk, once")
    func heldRecordsOverflow() async throws {
        let held = HeldRecords(capacity: 4)
        var persisted = 0
        for index in 0..<6 {
            #expect(held.hold("r\(index)", HeldRecords.Entry(value: [UInt8(index)], expiresAt: 100, heldAt: 1), now: 1) { _, _ in persisted += 1 })
        }
        #expect(persisted == 2, "the two that left the full table were queued for the disk first")
        var found = 0
        for index in 0..<6 where held.take("r\(index)", now: 2, forget: {})?.value == [UInt8(index)] { found += 1 }
        #expect(found == 4, "two left the table for the disk")
        #expect(held.hold("x", HeldRecords.Entry(value: [1], expiresAt: 100, heldAt: 1), now: 1) { _, _ in })
        #expect(!held.hold("x", HeldRecords.Entry(value: [2], expiresAt: 100, heldAt: 1), now: 1) { _, _ in }, "a live entry is not replaced")
        #expect(held.take("x", now: 200, forget: {}).map { $0.value == nil } == true, "expired: held, but no value")

        let path = TemporaryDirectory.make() + "/store.db"
        let store = try SQLiteStore(path: path)
        for index in 0..<(8_192 + 10) {
            #expect(try await store.putOneTimeRecord("st:\(index)", value: [UInt8(index % 256)], ttlSeconds: 60))
        }
        for index in 0..<(8_192 + 10) {
            #expect(try await store.takeRecord("st:\(index)") == [UInt8(index % 256)])
        }
        #expect(try await store.takeRecord("st:0") == nil)
        await store.close()
    }

    @Test("of many concurrent takers exactly one gets the record, one-time or not", arguments: Backend.allCases)
    func takeOnce(backend: Backend) async throws {
        let store = try await backend.make()
        for round in 0..<20 {
            let put = round.isMultiple(of: 2) ? store.putRecord : store.putOneTimeRecord
            #expect(try await put("code\(round)", [UInt8(round)], 60))
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

    @Test("concurrent writes each get their own outcome, conflicts included", arguments: Backend.allCases)
    func concurrentWrites(backend: Backend) async throws {
        let store = try await backend.make()
        // SQLite runs writes that arrive together in one transaction: a conflict in one must
        // neither fail nor undo its neighbours.
        let created = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<64 {
                group.addTask {
                    do throws(StoreError) {
                        try await store.createApp(app("dup\(index % 8)"))
                        return 1
                    } catch {
                        guard error.isConflict else { throw error }
                        return 0
                    }
                }
                group.addTask {
                    let stored = try await store.putRecord("rec\(index)", value: [UInt8(index)], ttlSeconds: 60)
                    #expect(stored)
                    return 0
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(created == 8)
        #expect(try await store.apps().count == 8)
        for index in 0..<64 {
            #expect(try await store.takeRecord("rec\(index)") == [UInt8(index)])
            #expect(try await store.takeRecord("rec\(index)") == nil)
        }
        await store.close()
    }

    @Test("sqlite: writes queued behind another process's write lock all land once it is released")
    func sqliteWaitsForForeignWriter() async throws {
        let (store, other) = try storeBehindForeignWriteLock()
        let writes = Task {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<32 {
                    group.addTask { try await store.putRecord("queued\(index)", value: [1], ttlSeconds: 60) }
                }
                return try await group.reduce(true) { $0 && $1 }
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        try other.executeScript("COMMIT")
        #expect(try await writes.value)
        for index in 0..<32 {
            #expect(try await store.record("queued\(index)") == [1])
        }
        await store.close()
    }

    @Test("sqlite: a write after close fails at once; the writer's thread does not wait for it")
    func sqliteWriteAfterClose() async throws {
        let store = try SQLiteStore(path: TemporaryDirectory.make() + "/store.db")
        #expect(try await store.putRecord("before", value: [1], ttlSeconds: 60))
        await store.close()
        await #expect(throws: StoreError.unavailable("")) { try await store.putRecord("after", value: [1], ttlSeconds: 60) }
        await #expect(throws: StoreError.unavailable("")) { try await store.takeRecord("before") }
        await #expect(throws: StoreError.unavailable("")) { try await store.putOneTimeRecord("after", value: [1], ttlSeconds: 60) }
    }

    @Test("sqlite: a one-time record change that cannot be written is logged, without its id")
    func sqliteLostWriteLogged() async throws {
        let path = TemporaryDirectory.make() + "/store.db"
        let lines = Mutex<[String]>([])
        let logger = Logger(label: "test", handler: StreamLogHandler(format: .json) { line in lines.withLock { $0.append(line) } })
        let store = try SQLiteStore(path: path, logger: logger)
        try SQLiteConnection(path: path).executeScript("DROP TABLE records")
        #expect(try await store.putOneTimeRecord("st:secret-state-id", value: [1], ttlSeconds: 60))
        // Held past the window, the record is queued for the disk, where its insert fails.
        for _ in 0..<300 {
            if !lines.withLock({ $0.isEmpty }) { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try await store.takeRecord("st:secret-state-id") == [1], "answered from memory all the same")
        await store.close()
        let logged = lines.withLock { $0 }
        #expect(logged.count == 2, "the insert and the delete")
        #expect(logged.allSatisfy { $0.contains("A login record change could not be written to the database") })
        #expect(!logged.contains { $0.contains("secret-state-id") })
    }

    @Test("sqlite: under a steady stream of commits the WAL is checkpointed off the writer and stays bounded")
    func sqliteWALStaysBounded() async throws {
        let path = TemporaryDirectory.make() + "/store.db"
        let store = try SQLiteStore(path: path)
        let value = [UInt8](repeating: 0x5A, count: 600)
        // One commit per put, two pages or more each: over 120 MB of WAL if nothing rewound it.
        for index in 0..<16_000 {
            #expect(try await store.putRecord("r\(index)", value: value, ttlSeconds: 600))
            if index % 2 == 1 { #expect(try await store.takeRecord("r\(index - 1)") == value) }
        }
        var status = stat()
        #expect(stat(path + "-wal", &status) == 0)
        // Passive passes copy it back and the writer rewinds it soon after it passes
        // SQLiteCheckpointer.restartPages (17 MB): about 20 MB when the test runs alone, more
        // when parallel tests slow the checkpoint thread down.
        #expect(status.st_size < 120 << 20, "WAL reached \(status.st_size) bytes")
        await store.close()
        let reopened = try SQLiteStore(path: path)
        #expect(try await reopened.record("r15999") == value)
        #expect(try await reopened.record("r15998") == nil)
        await reopened.close()
    }

    @Test("sqlite: a reader holding an old snapshot delays the WAL's rewind, never the writes")
    func sqliteRewindWaitsForNoReader() async throws {
        let path = TemporaryDirectory.make() + "/store.db"
        let store = try SQLiteStore(path: path)
        #expect(try await store.putRecord("first", value: [1], ttlSeconds: 600))
        // Another connection (a CLI process, an operator's sqlite3 shell) stays in a read transaction.
        let reader = try SQLiteConnection(path: path)
        try reader.executeScript("BEGIN; SELECT count(*) FROM records;")
        let value = [UInt8](repeating: 0x5A, count: 600)
        var stalls: [Duration] = []
        let clock = ContinuousClock()
        // About three WAL pages a commit: past SQLiteCheckpointer.restartPages twice over.
        for index in 0..<3_000 {
            let started = clock.now
            #expect(try await store.putRecord("r\(index)", value: value, ttlSeconds: 600))
            if clock.now - started >= .seconds(4) { stalls.append(clock.now - started) }
        }
        // A rewind that waits out SQLite's usual 5 s busy timeout stalls every queued write, once
        // per attempt: three 5.01 s stalls in this run when the rewind was given that timeout.
        // One stall alone is this task kept off a busy machine's cores (5.26 s, once in CI).
        #expect(stalls.count < 2, "writes waited \(stalls)")
        try reader.executeScript("COMMIT;")
        await store.close()
    }

    @Test("binary values round-trip byte for byte", arguments: Backend.allCases)
    func binaryValues(backend: Backend) async throws {
        let store = try await backend.make()
        let every = (0...255).map { UInt8($0) } + Array("|v1|code|7|".utf8) + [0, 0]
        #expect(try await store.putRecord("bin", value: every, ttlSeconds: 60))
        #expect(try await store.record("bin") == every)
        var named = app("bin")
        named.name = "Café ☕ \"quoted\" | bar"
        named.sealedSecret = every
        named.domains = ["ünïcode.example", "*.example.com"]
        try await store.createApp(named)
        #expect(try await store.app(key: "bin") == named)
        let keyset = StoredKeyset(provider: "github", sealedParameters: every, responseType: .token, updatedAt: -3)
        #expect(try await store.putKeyset(keyset, appKey: "bin"))
        #expect(try await store.keyset(appKey: "bin", provider: "github") == keyset)
        #expect(try await store.keysets(appKey: "bin") == [keyset])
        await store.close()
    }

    @Test("redis: an unreachable server fails fast as unavailable, and the store recovers when it appears")
    func redisUnreachable() async throws {
        // Held bound but not listening until Redis starts on it: connections are refused, and
        // nothing running alongside can take the port meanwhile.
        var holder: RefusingPort? = RefusingPort()
        let port = try #require(holder?.port)
        let store = RedisStore(endpoint: try await redisEndpoint(url: "redis://127.0.0.1:\(port)/0"))
        let clock = ContinuousClock()
        for _ in 0..<5 {
            let started = clock.now
            await #expect(throws: StoreError.unavailable("")) { try await store.ping() }
            // Refused at once; the bound only proves there is no hang, since the whole suite
            // runs in parallel on two cores (the gateway-level checks are in RedisOutageTests).
            #expect(clock.now - started < .seconds(10))
        }
        holder = nil
        let server = try await RedisServer.launch(port: port)
        // The backoff is at most 1 s; the rest is room for a suite loading both cores.
        let deadline = clock.now + .seconds(15)
        var recovered = false
        while clock.now < deadline, !recovered {
            recovered = (try? await store.ping()) != nil
            if !recovered { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(recovered, "reconnected after the backoff")
        #expect(try await store.putRecord("after", value: [1], ttlSeconds: 60))
        await store.close()
        await server.stop()
    }

    @Test("redis: commands sent as one pipeline answer in order, and an error reply stays with its own command")
    func redisPipeline() async throws {
        let endpoint = try await redisEndpoint(timeout: .seconds(5))
        let connection = try RedisConnection(
            host: endpoint.host, port: endpoint.port, database: endpoint.database, username: nil, password: nil,
            timeoutMilliseconds: endpoint.timeoutMilliseconds)
        let key = Array("test-pipeline-\(UInt64.random(in: 0...UInt64.max))".utf8)
        let replies = try connection.execute(batch: [
            [Array("SET".utf8), key, [0, 1, 2]],
            // A hash command on a string: Redis answers WRONGTYPE for this one command only.
            [Array("HGET".utf8), key, Array("field".utf8)],
            [Array("GET".utf8), key],
            [Array("DEL".utf8), key],
        ])
        #expect(replies.count == 4)
        #expect(replies[0] == .status("OK"))
        guard case .error(let text) = replies[1] else { Issue.record("expected an error reply, got \(replies[1])"); return }
        #expect(text.hasPrefix("WRONGTYPE"))
        #expect(replies[2] == .bytes([0, 1, 2]))
        #expect(replies[3] == .integer(1))
        #expect(try connection.execute(batch: []) == [])
    }

    @Test("redis: one store's connection carries many handlers' commands at once, each answered with its own reply")
    func redisConcurrentCommands() async throws {
        let store = try await Backend.redis.make()
        // More than one pipeline's worth, all in flight together.
        let stored = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<200 {
                group.addTask { try await store.putRecord("r\(index)", value: Array("v\(index)".utf8), ttlSeconds: 60) }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(stored == 200)
        let read = try await withThrowingTaskGroup(of: (Int, [UInt8]?).self) { group in
            for index in 0..<200 { group.addTask { (index, try await store.takeRecord("r\(index)")) } }
            return try await group.reduce(into: [Int: [UInt8]]()) { $0[$1.0] = $1.1 }
        }
        #expect(read.count == 200)
        for (index, value) in read { #expect(value == Array("v\(index)".utf8)) }
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


@Suite("Redis authentication")
struct RedisAuthenticationTests {
    @Test("a password-protected Redis: the right password works, a wrong one is a clear store error")
    func requirePass() async throws {
        let server = try await RedisServer.launch(extraArguments: ["--requirepass", "gh-test-pass"])
        defer { Task { await server.stop() } }
        let good = RedisStore(endpoint: RedisEndpoint(host: "127.0.0.1", port: Int(server.port), password: "gh-test-pass"))
        #expect(try await good.putRecord("r1", value: [1], ttlSeconds: 60))
        #expect(try await good.record("r1") == [1])
        await good.close()
        let bad = RedisStore(endpoint: RedisEndpoint(host: "127.0.0.1", port: Int(server.port), password: "wrong"))
        await #expect(throws: StoreError.self) { try await bad.ping() }
        await bad.close()
    }
}

/// A fresh SQLite store, and another connection (standing in for the CLI) holding its write
/// lock until the test commits it.
func storeBehindForeignWriteLock() throws -> (SQLiteStore, SQLiteConnection) {
    let path = TemporaryDirectory.make() + "/store.db"
    let store = try SQLiteStore(path: path)
    let other = try SQLiteConnection(path: path)
    try other.executeScript("BEGIN IMMEDIATE")
    return (store, other)
}
