public import GatehouseCore
internal import Dispatch
internal import Synchronization
#if canImport(Glibc)
internal import Glibc
#endif

/// The embedded store: one SQLite file in WAL mode, shared safely with CLI processes.
///
/// Reads run on the caller's thread on whichever connection is free (see `Lane`); every
/// mutation goes through `SQLiteWriter`, which owns the first connection's writes.
///
/// One-time records (`putOneTimeRecord`) are held in memory (`HeldRecords`), and reach the disk
/// only if they are still there half a second later; their takes reach it within a few
/// milliseconds, unawaited. A crash loses the records younger than that half second (a login
/// then in flight fails) and the takes of those last milliseconds (a code taken then could be
/// taken again, by its own app).
/// Only one server process may use a database for this to hold: opened with `serving`, as
/// `gatehouse serve` opens it, the store takes a lock beside the file. CLI processes never
/// touch these records.
public final class SQLiteStore: Store {
    private let lanes: [Lane]
    private let writer: SQLiteWriter
    private let held = HeldRecords()
    /// One process owns the file, so its rate-limit buckets need not outlive it.
    private let buckets = TokenBuckets()
    /// Ends the thread that persists held records once they are due.
    private let heldStop = DispatchSemaphore(value: 0)
    /// Reports a one-time record change that never reached the disk. The record's id is a
    /// credential, so it stays out of the log.
    private let lost: @Sendable (StoreError) -> Void
    private let nextLane = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)
    private let putsSincePurge = Atomic<Int>(0)

    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    /// `serving`: this process serves the database, and must be its only server, since the
    /// one-time records it holds are invisible to any other; it takes `PATH.serve-lock` for its
    /// lifetime before touching the database, so a refused second server migrates and writes
    /// nothing. `logger` hears of one-time record changes that could not be written.
    public init(path: String, connections: Int = 2, serving: Bool = false, logger: Logger = .silent()) throws(StoreError) {
        lost = { error in logger.error("A login record change could not be written to the database", ["error": error.description]) }
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            let directory = String(path[..<slash])
            guard FileSystem.makeDirectories(directory) else { throw .invalidLocation("cannot create the directory \(directory)") }
        }
        guard !serving || FileSystem.lockForLifetime(path + ".serve-lock") else {
            throw .conflict("another gatehouse serve uses sqlite:\(path); one server per SQLite database (several share Redis)")
        }
        func open() throws(StoreError) -> SQLiteConnection {
            let connection = try SQLiteConnection(path: path)
            try connection.executeScript("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
            return connection
        }
        var lanes: [Lane] = []
        for index in 0..<max(1, connections) {
            let connection = try open()
            if index == 0 {
                try SQLiteSchema.migrate(connection)
                // The file holds sealed secrets only, but it is still nobody else's business.
                chmod(path, 0o600)
                // The writer's connection: checkpoints run on a connection of their own
                // (`SQLiteCheckpointer`), never inside its commits.
                try connection.executeScript("PRAGMA wal_autocheckpoint=0;")
            }
            lanes.append(Lane(connection: connection))
        }
        self.lanes = lanes
        let checkpointer = try SQLiteCheckpointer(lane: Lane(connection: try open()))
        do throws(StoreError) {
            writer = try SQLiteWriter(lane: lanes[0], checkpointer: checkpointer)
        } catch {
            checkpointer.close()
            throw error
        }
        // The thread holds the store until `close` ends it.
        guard ServiceThread.startDetached(name: "sqlite-held", { self.persistHeldRecords() }) else {
            writer.close()
            throw .unavailable("cannot start the SQLite held-records thread")
        }
    }

    /// Every `heldTickMilliseconds`, queues the inserts of the held records that are due.
    private func persistHeldRecords() {
        while heldStop.wait(timeout: .now() + .milliseconds(Self.heldTickMilliseconds)) == .timedOut {
            held.persistDue(now: Self.monotonicMilliseconds(), persist: persistHeld)
        }
    }

    static let heldTickMilliseconds = 100

    /// Queues the insert of a held record; runs under the held table's lock, so that the
    /// record's delete, if it is taken next, queues behind it.
    private func persistHeld(_ id: String, _ entry: HeldRecords.Entry) {
        let purge = purgeDue()
        writer.enqueue(
            { connection throws(StoreError) in
                _ = try Self.insertRecord(
                    id, value: entry.value, expiresAt: entry.expiresAt, now: Self.nowMilliseconds(), purge: purge, on: connection)
            },
            failed: lost)
    }

    public func createApp(_ app: StoredApp) async throws(StoreError) {
        let domains = try Self.encodeDomains(app.domains)
        _ = try await write { connection throws(StoreError) in
            try connection.query(
                "INSERT INTO apps (key, name, sealed_secret, domains, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                [.text(app.key), .text(app.name), .blob(app.sealedSecret), .text(domains), .integer(app.createdAt)])
        }
    }

    public func app(key: String) async throws(StoreError) -> StoredApp? {
        let rows = try read { connection throws(StoreError) in
            try connection.query(
                "SELECT key, name, sealed_secret, domains, created_at FROM apps WHERE key = ?1", [.text(key)])
        }
        return try rows.first.map(Self.decodeApp)
    }

    public func apps() async throws(StoreError) -> [StoredApp] {
        let rows = try read { connection throws(StoreError) in
            try connection.query("SELECT key, name, sealed_secret, domains, created_at FROM apps ORDER BY created_at, rowid")
        }
        return try rows.map(Self.decodeApp)
    }

    public func updateApp(_ app: StoredApp) async throws(StoreError) -> Bool {
        let domains = try Self.encodeDomains(app.domains)
        return try await write { connection throws(StoreError) in
            try connection.query(
                "UPDATE apps SET name = ?2, sealed_secret = ?3, domains = ?4 WHERE key = ?1",
                [.text(app.key), .text(app.name), .blob(app.sealedSecret), .text(domains)])
            return connection.changes == 1
        }
    }

    public func deleteApp(key: String) async throws(StoreError) -> Bool {
        try await write { connection throws(StoreError) in
            try connection.query("DELETE FROM apps WHERE key = ?1", [.text(key)])
            return connection.changes == 1
        }
    }

    public func putKeyset(_ keyset: StoredKeyset, appKey: String) async throws(StoreError) -> Bool {
        try await write { connection throws(StoreError) in
            try connection.query(
                """
                INSERT INTO keysets (app_key, provider, sealed_parameters, response_type, updated_at, device_sign_in)
                SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (SELECT 1 FROM apps WHERE key = ?1)
                ON CONFLICT (app_key, provider) DO UPDATE SET
                    sealed_parameters = excluded.sealed_parameters,
                    response_type = excluded.response_type,
                    updated_at = excluded.updated_at,
                    device_sign_in = excluded.device_sign_in
                """,
                [
                    .text(appKey), .text(keyset.provider), .blob(keyset.sealedParameters),
                    .text(keyset.responseType.rawValue), .integer(keyset.updatedAt), .integer(keyset.deviceSignIn ? 1 : 0),
                ])
            return connection.changes == 1
        }
    }

    public func keyset(appKey: String, provider: String) async throws(StoreError) -> StoredKeyset? {
        let rows = try read { connection throws(StoreError) in
            try connection.query(
                """
                SELECT provider, sealed_parameters, response_type, updated_at, device_sign_in FROM keysets
                WHERE app_key = ?1 AND provider = ?2
                """,
                [.text(appKey), .text(provider)])
        }
        return try rows.first.map(Self.decodeKeyset)
    }

    public func keysets(appKey: String) async throws(StoreError) -> [StoredKeyset] {
        let rows = try read { connection throws(StoreError) in
            try connection.query(
                """
                SELECT provider, sealed_parameters, response_type, updated_at, device_sign_in FROM keysets
                WHERE app_key = ?1 ORDER BY provider
                """,
                [.text(appKey)])
        }
        return try rows.map(Self.decodeKeyset)
    }

    public func deleteKeyset(appKey: String, provider: String) async throws(StoreError) -> Bool {
        try await write { connection throws(StoreError) in
            try connection.query("DELETE FROM keysets WHERE app_key = ?1 AND provider = ?2", [.text(appKey), .text(provider)])
            return connection.changes == 1
        }
    }

    public func putRecord(_ id: String, value: [UInt8], ttlSeconds: Int) async throws(StoreError) -> Bool {
        let now = Self.nowMilliseconds()
        // A one-time record held here may not be on disk yet, where the insert looks.
        if held.peek(id, now: now)?.value != nil { return false }
        let expiry = now + Int64(ttlSeconds) * 1000
        let purge = purgeDue()
        return try await write { connection throws(StoreError) in
            try Self.insertRecord(id, value: value, expiresAt: expiry, now: now, purge: purge, on: connection)
        }
    }

    public func putOneTimeRecord(_ id: String, value: [UInt8], ttlSeconds: Int) async throws(StoreError) -> Bool {
        // A writer this far behind (another process holding the write lock, a stalled disk)
        // gets no more unawaited work: callers wait for their commit again, as for any write,
        // instead of the queue growing with every login.
        if writer.backlog >= Self.backlogLimit { return try await putRecord(id, value: value, ttlSeconds: ttlSeconds) }
        let now = Self.nowMilliseconds()
        let expiry = now + Int64(ttlSeconds) * 1000
        guard !closed.load(ordering: .acquiring) else { throw .unavailable("the store is closed") }
        let entry = HeldRecords.Entry(value: value, expiresAt: expiry, heldAt: Self.monotonicMilliseconds())
        return held.hold(id, entry, now: now, persist: persistHeld)
    }

    /// Queued writes past which one-time records are written like any other (awaited).
    static let backlogLimit = 4_096

    private func purgeDue() -> Bool {
        putsSincePurge.add(1, ordering: .relaxed).newValue % 512 == 0
    }

    /// Inserts a record, first purging expired ones if `purge`; false if a live one has the id.
    private static func insertRecord(
        _ id: String, value: [UInt8], expiresAt: Int64, now: Int64, purge: Bool, on connection: SQLiteConnection
    ) throws(StoreError) -> Bool {
        if purge {
            try connection.query("DELETE FROM records WHERE expires_at <= ?1", [.integer(now)])
        }
        // An expired row with the same id may be overwritten; a live one may not.
        try connection.query(
            """
            INSERT INTO records (id, value, expires_at) VALUES (?1, ?2, ?3)
            ON CONFLICT (id) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
            WHERE records.expires_at <= ?4
            """,
            [.text(id), .blob(value), .integer(expiresAt), .integer(now)])
        return connection.changes == 1
    }

    public func record(_ id: String) async throws(StoreError) -> [UInt8]? {
        let now = Self.nowMilliseconds()
        if let found = held.peek(id, now: now) { return found.value }
        return try read { connection throws(StoreError) in try Self.liveRecord(id, now: now, on: connection) }
    }

    /// The value of `id` unless it has expired by `now`.
    private static func liveRecord(_ id: String, now: Int64, on connection: SQLiteConnection) throws(StoreError) -> [UInt8]? {
        try connection.query("SELECT value FROM records WHERE id = ?1 AND expires_at > ?2", [.text(id), .integer(now)]).first?.first?.blob
    }

    public func takeRecord(_ id: String) async throws(StoreError) -> [UInt8]? {
        let now = Self.nowMilliseconds()
        let found = held.take(id, now: now) {
            writer.enqueue({ connection throws(StoreError) in try connection.query("DELETE FROM records WHERE id = ?1", [.text(id)]) }, failed: lost)
        }
        if let found { return found.value }
        return try await write { connection throws(StoreError) in
            // Read, then delete, inside the writer's transaction (BEGIN IMMEDIATE holds the write
            // lock), so two racing takers cannot both get the row. Cheaper than one
            // `DELETE … RETURNING`, which gathers its rows in a temporary table first.
            guard let value = try Self.liveRecord(id, now: now, on: connection) else { return nil }
            try connection.query("DELETE FROM records WHERE id = ?1", [.text(id)])
            return value
        }
    }

    public func spendToken(_ name: String, rule: BucketRule) -> Int? {
        buckets.spend(name, rule: rule, now: Double(Self.monotonicMilliseconds()) / 1000)
    }

    public func ping() async throws(StoreError) {
        _ = try read { connection throws(StoreError) in
            try connection.query("SELECT 1 FROM apps LIMIT 1")
        }
    }

    /// How many writes wait for the writer's next commit (for tests).
    var backlog: Int { writer.backlog }

    public func close() async {
        closed.store(true, ordering: .releasing)
        heldStop.signal()
        held.persistAll(persist: persistHeld)
        writer.close()
        for lane in lanes { lane.close() }
    }

    private func write<T: Sendable>(
        _ work: @escaping @Sendable (SQLiteConnection) throws(StoreError) -> T
    ) async throws(StoreError) -> T {
        try await writer.run(work)
    }

    /// Reads take whichever connection is free, the writer's included.
    private func read<T: Sendable>(_ work: (SQLiteConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        let start = nextLane.add(1, ordering: .relaxed).newValue
        for offset in 0..<lanes.count {
            if let result = lanes[(start + offset) % lanes.count].runIfFree(work) { return try result.get() }
        }
        return try lanes[lanes.count > 1 ? 1 + start % (lanes.count - 1) : 0].run(work)
    }

    private static func decodeApp(_ row: [SQLiteValue]) throws(StoreError) -> StoredApp {
        guard row.count == 5, let key = row[0].text, let name = row[1].text, let sealed = row[2].blob,
            let domainsText = row[3].text, let created = row[4].integer,
            let domains = try? JSONCoding.decode([String].self, from: Array(domainsText.utf8))
        else { throw .corrupt("an apps row could not be read") }
        return StoredApp(key: key, name: name, sealedSecret: sealed, domains: domains, createdAt: created)
    }

    private static func decodeKeyset(_ row: [SQLiteValue]) throws(StoreError) -> StoredKeyset {
        guard row.count == 5, let provider = row[0].text, let sealed = row[1].blob, let typeText = row[2].text,
            let type = ResponseType(rawValue: typeText), let updated = row[3].integer, let device = row[4].integer
        else { throw .corrupt("a keysets row could not be read") }
        return StoredKeyset(provider: provider, sealedParameters: sealed, responseType: type, updatedAt: updated, deviceSignIn: device != 0)
    }

    private static func encodeDomains(_ domains: [String]) throws(StoreError) -> String {
        guard let bytes = try? JSONCoding.encode(domains) else { throw .corrupt("domains could not be encoded") }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func nowMilliseconds() -> Int64 {
        milliseconds(of: CLOCK_REALTIME)
    }

    /// For how long a record has been held: unlike the wall clock, it never steps back, which
    /// would keep records from the disk until it caught up.
    static func monotonicMilliseconds() -> Int64 {
        milliseconds(of: CLOCK_MONOTONIC)
    }

    private static func milliseconds(of clock: clockid_t) -> Int64 {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec / 1_000_000)
    }
}
