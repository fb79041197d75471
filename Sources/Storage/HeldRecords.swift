internal import GatehouseCore
internal import Synchronization

/// The one-time records (login states, one-time codes) this process has put and not yet seen
/// taken, kept in memory; the database gets only those that stay.
///
/// A login puts each of these records and takes it back once, on the same process (one server
/// uses an SQLite database). Answering the put and the take from here, without waiting for a
/// commit, spares each of them a connection suspension and a wake-up of the writer thread: at
/// the login benchmark's rate, 38 system calls per login became 20, and 412 µs of gateway CPU
/// per login 376.
///
/// Most of these records are taken within a second: a code by the app's backend as soon as the
/// browser brings it, a state as soon as the provider sends the user back. So a record's insert
/// is queued for the database only once it has been held for `window` (`persistDue`); one taken
/// before then never reaches the disk, and neither does its delete. A one-time code redeemed at
/// once is then never at rest at all, and the writer commits only the records that outlive the
/// window. In paired runs of the login benchmark, whose records all go within milliseconds,
/// the gateway's CPU per login fell from 375 to 312 µs and its logins per second rose by 18%.
///
/// Whoever changes the table queues the database write while holding the table's lock, so the
/// writer sees a record's insert before its delete, and a take that misses here queues its own
/// take behind both. The table is bounded: when full, an arbitrary entry leaves it (its insert
/// queued first, if it had none) and is then found on disk only, by the writer's own take.
final class HeldRecords: Sendable {
    struct Entry: Sendable {
        var value: [UInt8]
        var expiresAt: Int64
        /// When it was held (ms, monotonic clock), which makes it due for the disk `window` later.
        var heldAt: Int64
        /// Its insert is queued for the database; taking it must then queue a delete.
        var persisted = false
    }

    /// What the table knows of an id it holds; `value` is nil once the record has expired.
    struct Found {
        var value: [UInt8]?
    }

    /// Queues an entry's insert for the database; always called under the table's lock.
    typealias Persist = (String, Entry) -> Void

    private struct Table: ~Copyable {
        var entries: [String: Entry] = [:]
        /// Ids in the order they were held, not yet persisted (from `duePosition` on). Some may
        /// have been taken since; they are skipped.
        var due: [String] = []
        var duePosition = 0
        var holdsSinceSweep = 0
        /// After `persistAll` (the store is closing): every entry is persisted as it comes.
        var writeThrough = false
    }

    static let sweepEvery = 1_024
    /// How long a record stays in memory only (ms); a crash loses the records younger than this.
    static let window: Int64 = 500
    private let capacity: Int
    private let table = Mutex(Table())

    init(capacity: Int = 8_192) {
        self.capacity = capacity
    }

    /// Holds `entry` unless a live entry has this id (then false). `persist` runs only if the
    /// table is full (for the entry that leaves) or the store is closing (for this one).
    func hold(_ id: String, _ entry: Entry, now: Int64, persist: Persist) -> Bool {
        table.withLock { table in
            if let existing = table.entries[id], existing.expiresAt > now { return false }
            table.holdsSinceSweep += 1
            if table.holdsSinceSweep >= Self.sweepEvery {
                table.holdsSinceSweep = 0
                // An expired record need not reach the disk; one already there stays until purged.
                table.entries = table.entries.filter { $0.value.expiresAt > now }
            }
            if table.entries.count >= capacity, let any = table.entries.indices.first {
                let (leaving, left) = table.entries[any]
                if !left.persisted { persist(leaving, left) }
                table.entries.remove(at: any)
            }
            var entry = entry
            if table.writeThrough {
                persist(id, entry)
                entry.persisted = true
            } else {
                table.due.append(id)
            }
            table.entries[id] = entry
            return true
        }
    }

    /// Removes `id` and answers what it held, queuing the delete (`forget`) under the table's
    /// lock if its insert was queued; nil when the table does not hold `id`.
    func take(_ id: String, now: Int64, forget: () -> Void) -> Found? {
        table.withLock { table in
            guard let entry = table.entries.removeValue(forKey: id) else { return nil }
            if entry.persisted { forget() }
            return Found(value: entry.expiresAt > now ? entry.value : nil)
        }
    }

    /// What the table holds for `id`, leaving it; nil when it does not hold `id`.
    func peek(_ id: String, now: Int64) -> Found? {
        table.withLock { table in
            table.entries[id].map { Found(value: $0.expiresAt > now ? $0.value : nil) }
        }
    }

    /// Persists the entries held for `window` or longer by `now` (the clock of `heldAt`).
    func persistDue(now: Int64, persist: Persist) {
        table.withLock { table in
            while table.duePosition < table.due.count {
                let id = table.due[table.duePosition]
                if var entry = table.entries[id], !entry.persisted {
                    // Ids are queued in the order held, so the first one not yet due ends the
                    // pass. (An id taken and held again is queued twice; its first place may end
                    // a pass early, which only leaves the ids behind it to the next pass.)
                    guard entry.heldAt + Self.window <= now else { break }
                    persist(id, entry)
                    entry.persisted = true
                    table.entries[id] = entry
                }
                table.duePosition += 1
            }
            Self.compact(&table)
        }
    }

    /// Persists every entry not yet persisted, and from now on each as it is held: the store
    /// is closing, and what it holds must reach the disk before the writer stops.
    func persistAll(persist: Persist) {
        table.withLock { table in
            table.writeThrough = true
            for (id, entry) in table.entries where !entry.persisted {
                persist(id, entry)
                table.entries[id]?.persisted = true
            }
            table.due = []
            table.duePosition = 0
        }
    }

    /// Drops the ids already passed, once they are the larger part of the queue.
    private static func compact(_ table: inout Table) {
        if table.duePosition == table.due.count {
            table.due.removeAll(keepingCapacity: true)
            table.duePosition = 0
        } else if table.duePosition > 1_024, table.duePosition * 2 > table.due.count {
            table.due.removeFirst(table.duePosition)
            table.duePosition = 0
        }
    }
}
