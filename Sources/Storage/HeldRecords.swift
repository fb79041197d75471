internal import GatehouseCore
internal import Synchronization

/// The one-time records (login states, one-time codes) this process has put and not yet seen
/// taken, kept in memory next to the copy queued for the database.
///
/// A login puts each of these records and takes it back once, on the same process (one server
/// uses an SQLite database). Answering the put and the take from here, without waiting for a
/// commit, spares each of them a connection suspension and a wake-up of the writer thread: at
/// the login benchmark's rate, 38 system calls per login became 20, and 412 µs of gateway CPU
/// per login 376. The database still gets every change, a few milliseconds later
/// (`SQLiteWriter.enqueue`). Whoever changes the table queues the database write while holding
/// the table's lock, so the writer sees a record's insert before its delete, and a take that
/// misses here queues its own take behind both.
///
/// The table is bounded: when full, an arbitrary entry leaves it and is then found on disk
/// only, by the writer's own take, which is queued behind the insert.
final class HeldRecords: Sendable {
    struct Entry: Sendable {
        var value: [UInt8]
        var expiresAt: Int64
    }

    /// What the table knows of an id it holds; `value` is nil once the record has expired.
    struct Found {
        var value: [UInt8]?
    }

    private struct Table: ~Copyable {
        var entries: [String: Entry] = [:]
        var holdsSinceSweep = 0
    }

    static let sweepEvery = 1_024
    private let capacity: Int
    private let table = Mutex(Table())

    init(capacity: Int = 8_192) {
        self.capacity = capacity
    }

    /// Holds `entry` unless a live entry has this id (then false, and `persist` does not run).
    /// `persist` queues the insert under the table's lock.
    func hold(_ id: String, _ entry: Entry, now: Int64, persist: () -> Void) -> Bool {
        table.withLock { table in
            if let existing = table.entries[id], existing.expiresAt > now { return false }
            table.holdsSinceSweep += 1
            if table.holdsSinceSweep >= Self.sweepEvery {
                table.holdsSinceSweep = 0
                table.entries = table.entries.filter { $0.value.expiresAt > now }
            }
            if table.entries.count >= capacity, let any = table.entries.indices.first {
                table.entries.remove(at: any)
            }
            table.entries[id] = entry
            persist()
            return true
        }
    }

    /// Removes `id` and answers what it held, queuing the delete (`forget`) under the table's
    /// lock; nil when the table does not hold `id`.
    func take(_ id: String, now: Int64, forget: () -> Void) -> Found? {
        table.withLock { table in
            guard let entry = table.entries.removeValue(forKey: id) else { return nil }
            forget()
            return Found(value: entry.expiresAt > now ? entry.value : nil)
        }
    }

    /// What the table holds for `id`, leaving it; nil when it does not hold `id`.
    func peek(_ id: String, now: Int64) -> Found? {
        table.withLock { table in
            table.entries[id].map { Found(value: $0.expiresAt > now ? $0.value : nil) }
        }
    }
}
