internal import Dispatch
internal import GatehouseCore
internal import Synchronization
#if canImport(Glibc)
internal import Glibc
#endif

/// Copies the WAL back into the database file on a thread of its own, so that the writer
/// never waits for the disk.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses 1,000 WAL pages, on the
/// committing thread. Its first step flushes those 4 MB of WAL to disk: 15 ms on this project's
/// 2-core machine, during which every queued write, and every login behind it, waited; at the
/// login benchmark's write rate that was several checkpoints a second. Here the writer's
/// connection checkpoints nothing itself; this thread runs passive checkpoints (which never
/// block the writer or readers) on its own connection, at most one every 50 ms.
///
/// A passive checkpoint cannot rewind the WAL while commits keep landing behind it, so under
/// sustained load the file would grow for ever. Once it holds `restartPages`, the writer runs
/// one blocking RESTART checkpoint between two batches (`restartIfDue`); the passive passes
/// have already flushed and copied nearly all of it, so that stall is short. A reader still on
/// the old WAL stops the rewind: the writer waits 10 ms at most, then leaves the rewind to a
/// later pass, fewer of them the longer the reader stays.
final class SQLiteCheckpointer: Sendable {
    static let pauseMicroseconds: UInt32 = 50_000
    static let restartPages: Int64 = 4096
    static let restartWaitMilliseconds: Int32 = 10

    private let lane: Lane
    private let wakeup = DispatchSemaphore(value: 0)
    private let requested = Atomic<Bool>(false)
    private let closed = Atomic<Bool>(false)
    private let restartDue = Atomic<Bool>(false)
    // The writer's own bookkeeping (only its thread touches them): after a rewind that found a
    // reader in the way, the next `restartSkips` requests are ignored, doubling up to 32.
    private let restartSkips = Atomic<Int>(0)
    private let restartBackoff = Atomic<Int>(0)

    init(lane: Lane) throws(StoreError) {
        self.lane = lane
        guard ServiceThread.startDetached(name: "sqlite-checkpoint", { self.serve() }) else {
            throw .unavailable("cannot start the SQLite checkpoint thread")
        }
    }

    /// Called after each commit: a pass starts unless one is already waiting to.
    func request() {
        if !requested.exchange(true, ordering: .acquiringAndReleasing) { wakeup.signal() }
    }

    /// Called by the writer between batches with its own lane: rewinds the WAL if a pass found
    /// it at `restartPages` or more.
    func restartIfDue(_ writerLane: Lane) {
        guard restartDue.exchange(false, ordering: .acquiringAndReleasing) else { return }
        if restartSkips.load(ordering: .relaxed) > 0 {
            restartSkips.subtract(1, ordering: .relaxed)
            return
        }
        // RESTART waits in the busy handler for readers to leave the old WAL, and every write
        // queues meanwhile: a reader that stays (another process's long read) must cost a few
        // milliseconds, not the usual 5 s, and not at every pass. Busy leaves the WAL as it is.
        let rows = try? writerLane.run { connection throws(StoreError) in
            try connection.withBusyTimeout(milliseconds: Self.restartWaitMilliseconds) { () throws(StoreError) in
                try connection.query("PRAGMA wal_checkpoint(RESTART)")
            }
        }
        let rewound = rows?.first?.first?.integer == 0
        let backoff = rewound ? 0 : min(max(1, restartBackoff.load(ordering: .relaxed) * 2), 32)
        restartBackoff.store(backoff, ordering: .relaxed)
        restartSkips.store(backoff, ordering: .relaxed)
    }

    /// Lets the thread end; a pass under way finishes first.
    func close() {
        closed.store(true, ordering: .releasing)
        wakeup.signal()
    }

    private func serve() {
        while true {
            wakeup.wait()
            if closed.load(ordering: .acquiring) { break }
            // Cleared before the pass, so that a commit during it asks for the next one.
            requested.store(false, ordering: .releasing)
            checkpoint()
            usleep(Self.pauseMicroseconds)
        }
        lane.close()
    }

    private func checkpoint() {
        // One row: busy flag, pages in the WAL, pages copied back.
        let rows = try? lane.run { connection throws(StoreError) in try connection.query("PRAGMA wal_checkpoint(PASSIVE)") }
        guard let row = rows?.first, row.count == 3, let pages = row[1].integer else { return }
        if pages >= Self.restartPages { restartDue.store(true, ordering: .releasing) }
    }
}
