internal import Dispatch
internal import GatehouseCore
internal import Synchronization

/// Every mutation goes through one writer connection, so this process never meets SQLite's
/// busy handler (which sleeps) racing itself; only another process (the CLI) can make it wait.
///
/// A write never runs on the caller's thread (an HTTP server thread, usually, with other
/// requests to serve): it joins a queue (`run` suspends the caller until its commit, `enqueue`
/// returns at once), and the writer's own thread runs everything queued in one transaction.
/// A commit costs about ten system calls (file locks, WAL page writes) and 30 µs however
/// little it holds, so under load the queued writes share them. Committing on the caller's
/// thread measured slower every way it was tried (alone when the writer was idle; leading the
/// batch once the caller's handler had suspended): batches shrank to about one write, and a
/// commit costs more than the thread switch it saves. The writer thread runs under
/// SCHED_BATCH (`ServiceThread`) so that waking it does not preempt the request thread that
/// queued the write, which lets batches fill.
///
/// A caller of `run` learns its outcome only once its transaction has ended: a take never
/// returns a row whose deletion was then rolled back, and a put never reports a record that is
/// not on disk. Changes queued with `enqueue` have nobody waiting: a queue holding only those
/// lingers up to `lingerMicroseconds` before it commits, so that a commit carries dozens of
/// them rather than one or two.
final class SQLiteWriter: Sendable {
    /// How long unawaited changes may wait for company, and how many end the wait.
    static let lingerMicroseconds = 2_000
    static let lingerBatch = 256

    private let lane: Lane
    private let checkpointer: SQLiteCheckpointer
    private let queue = Mutex(Queue())
    private let wakeup = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    private struct Queue: ~Copyable {
        var pending: [PendingWrite] = []
        /// How many of `pending` have a caller waiting.
        var awaited = 0
        var draining = false
        var lingering = false
        var closed = false
    }

    init(lane: Lane, checkpointer: SQLiteCheckpointer) throws(StoreError) {
        self.lane = lane
        self.checkpointer = checkpointer
        // The thread holds the writer until `close` lets it end.
        guard ServiceThread.startDetached(name: "sqlite-writer", { self.serve() }) else {
            throw .unavailable("cannot start the SQLite writer thread")
        }
    }

    /// Commits what is queued, then ends the thread; later writes fail.
    func close() {
        queue.withLock { $0.closed = true }
        wakeup.signal()
        finished.wait()
        finished.signal()  // for a second `close`
        checkpointer.close()
    }

    private func serve() {
        ServiceThread.preferThroughput()
        while true {
            wakeup.wait()
            drain()
            if queue.withLock({ $0.closed && $0.pending.isEmpty }) { break }
        }
        finished.signal()
    }

    func run<T: Sendable>(_ work: @escaping @Sendable (SQLiteConnection) throws(StoreError) -> T) async throws(StoreError) -> T {
        let result: Result<T, StoreError> = await withUnsafeContinuation { continuation in
            submit(
                PendingWrite(
                    apply: { connection in
                        let outcome = Result { () throws(StoreError) -> T in try work(connection) }
                        return { transactionError in
                            if let transactionError, case .success = outcome {
                                continuation.resume(returning: .failure(transactionError))
                            } else {
                                continuation.resume(returning: outcome)
                            }
                        }
                    },
                    abandon: { error in continuation.resume(returning: .failure(error)) }))
        }
        return try result.get()
    }

    /// How many writes wait for the next commit.
    var backlog: Int { queue.withLock { $0.pending.count } }

    /// Queues a change nobody waits for; `failed` hears if it never reaches the disk.
    func enqueue(
        _ work: @escaping @Sendable (SQLiteConnection) throws(StoreError) -> Void,
        failed: @escaping @Sendable (StoreError) -> Void
    ) {
        submit(
            PendingWrite(
                awaited: false,
                apply: { connection in
                    do throws(StoreError) {
                        try work(connection)
                    } catch {
                        return { _ in failed(error) }
                    }
                    return { transactionError in if let transactionError { failed(transactionError) } }
                },
                abandon: failed))
    }

    private func submit(_ write: PendingWrite) {
        enum Next { case wake, none, refuse }
        let next = queue.withLock { queue -> Next in
            guard !queue.closed else { return .refuse }
            queue.pending.append(write)
            if write.awaited { queue.awaited += 1 }
            if !queue.draining {
                queue.draining = true
                return .wake
            }
            guard queue.lingering, write.awaited || queue.pending.count >= Self.lingerBatch else { return .none }
            queue.lingering = false
            return .wake
        }
        switch next {
        case .wake: wakeup.signal()
        case .none: break
        case .refuse: write.abandon(.unavailable("the store is closed"))
        }
    }

    private func drain() {
        while true {
            lingerIfUnawaited()
            let batch = queue.withLock { queue in
                let batch = queue.pending
                queue.pending.removeAll(keepingCapacity: true)
                queue.awaited = 0
                if batch.isEmpty { queue.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            let notifications: [Notification]
            do throws(StoreError) {
                notifications = try lane.run { connection throws(StoreError) in Self.commit(batch, on: connection) }
            } catch {
                notifications = batch.map { write in { write.abandon(error) } }
            }
            // A request handler carries on on its connection's server thread, which wakes
            // anyway to send the answer (see the HTTP server's `Exchange`), so this thread goes
            // straight back to committing. The connections are handed back together. Running
            // the handlers here made this one thread do every handler's work after its commit
            // (half of the thread's 126 µs per login), a ceiling that more cores do not raise;
            // on two cores, logins per second came out the same either way in paired runs.
            InlineResumption.shared.batching {
                InlineResumption.shared.handingOff {
                    for notify in notifications { notify() }
                }
            }
            checkpointer.request()
            checkpointer.restartIfDue(lane)
        }
    }

    /// Waits for company when only unawaited changes are queued. A commit costs about ten
    /// system calls however little it holds; at the login benchmark's rate, lingering cut the
    /// writer's system calls from 12 to 2 per login. An awaited write, a full batch or `close`
    /// ends the wait early (`submit` signals).
    private func lingerIfUnawaited() {
        let linger = queue.withLock { queue -> Bool in
            guard queue.awaited == 0, !queue.closed, !queue.pending.isEmpty, queue.pending.count < Self.lingerBatch else {
                return false
            }
            queue.lingering = true
            return true
        }
        guard linger else { return }
        // A signal that arrives after the timeout is left over for the next wait, which then
        // returns at once and finds whatever is queued: harmless.
        _ = wakeup.wait(timeout: .now() + .microseconds(Self.lingerMicroseconds))
        queue.withLock { $0.lingering = false }
    }

    private typealias Notification = @Sendable () -> Void

    /// Runs the batch in one transaction and returns how to tell each caller its outcome.
    private static func commit(_ batch: [PendingWrite], on connection: SQLiteConnection) -> [Notification] {
        var notifications: [Notification] = []
        notifications.reserveCapacity(batch.count)
        var uncommitted: [PendingWrite.Finish] = []
        var transactionOpen = false

        func settle(_ error: StoreError?) {
            for finish in uncommitted { notifications.append { finish(error) } }
            uncommitted.removeAll()
        }

        for (position, write) in batch.enumerated() {
            if !transactionOpen {
                do throws(StoreError) {
                    try connection.query("BEGIN IMMEDIATE")
                    transactionOpen = true
                } catch {
                    // Usually another process held the write lock past the busy timeout:
                    // trying again per queued write would make the last one wait that long
                    // once for every write ahead of it.
                    for abandoned in batch[position...] { notifications.append { abandoned.abandon(error) } }
                    break
                }
            }
            uncommitted.append(write.apply(connection))
            // Some failures (disk full, I/O error) make SQLite roll the whole transaction
            // back: everything applied so far in it is gone.
            if !connection.inTransaction {
                transactionOpen = false
                settle(.unavailable("sqlite rolled the transaction back"))
            }
        }
        if transactionOpen {
            do throws(StoreError) {
                try connection.query("COMMIT")
                settle(nil)
            } catch {
                if connection.inTransaction { _ = try? connection.query("ROLLBACK") }
                settle(error)
            }
        }
        return notifications
    }
}

/// A queued mutation. `apply` runs its statements inside the batch's transaction and returns
/// the callback that reports to the caller once that transaction has committed (nil) or
/// failed; `abandon` reports an error for statements that never ran.
private struct PendingWrite: Sendable {
    typealias Finish = @Sendable (StoreError?) -> Void

    var awaited = true
    let apply: @Sendable (SQLiteConnection) -> Finish
    let abandon: @Sendable (StoreError) -> Void
}
