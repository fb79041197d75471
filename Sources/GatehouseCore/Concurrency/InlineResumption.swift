#if canImport(Glibc)
internal import Glibc
#endif

/// Where a request handler's next stretch may run at once: on the thread that wakes it,
/// instead of being handed to another thread.
///
/// Every hand-off is a thread switch, and on the request path those cost more than the work
/// between them. Three places opt in with `runningInline`:
/// - the HTTP server thread that dispatches a handler: most handlers never really suspend (a
///   cached app, an inline SQLite statement), so they answer on the same callback;
/// - the HTTP client thread delivering a response: the handler waiting for it carries on right
///   there (building its answer is short) instead of waking a server thread to do so;
/// - a Redis connection's thread delivering a reply, likewise: the handler runs until it
///   waits again, most often for its next Redis command.
/// Only the first job enqueued during `runningInline` runs inline (`claimInlineTurn`); the
/// executor placing it (the HTTP server's `Exchange`) sends every other one elsewhere, so
/// nothing recurses and no thread runs handler code it did not opt into. A thread may
/// instead hand the handlers it wakes back to their connections (`handingOff`).
///
/// `batching` groups such resumptions: what the handlers defer with `afterBatch` (handing
/// their connections back to the server) runs once the whole group has run. Resuming a
/// connection wakes a server thread, which would otherwise preempt the resuming thread
/// after the first handler; in paired login benchmark runs grouping saved about 25 µs of
/// CPU per login.
public final class InlineResumption: @unchecked Sendable {
    // `@unchecked`: the only state is the thread-local keys, set once in init.
    public static let shared = InlineResumption()

    private var key = pthread_key_t()
    private var batchKey = pthread_key_t()
    private var handOffKey = pthread_key_t()

    private init() {
        pthread_key_create(&key, nil)
        pthread_key_create(&batchKey, nil)
        pthread_key_create(&handOffKey, nil)
    }

    /// Work deferred to the end of a `batching` scope.
    private final class Batch {
        var deferred: [() -> Void] = []
    }

    /// Runs `body`; whatever is deferred with `afterBatch` on this thread meanwhile runs once
    /// it returns. A thread resuming many waiting handlers in a row (the SQLite writer after a
    /// commit, the HTTP client after a poll) wraps the run in this, so that their
    /// connections are handed back to the server in one go.
    public func batching(_ body: () -> Void) {
        guard pthread_getspecific(batchKey) == nil else { return body() }
        let batch = Batch()
        let pointer = Unmanaged.passRetained(batch).toOpaque()
        pthread_setspecific(batchKey, pointer)
        body()
        pthread_setspecific(batchKey, nil)
        Unmanaged<Batch>.fromOpaque(pointer).release()
        for work in batch.deferred { work() }
    }

    /// Defers `work` to the end of this thread's `batching` scope; false, deferring nothing,
    /// when there is none.
    public func afterBatch(_ work: @escaping () -> Void) -> Bool {
        guard let pointer = pthread_getspecific(batchKey) else { return false }
        Unmanaged<Batch>.fromOpaque(pointer).takeUnretainedValue().deferred.append(work)
        return true
    }

    /// Calls `body`, letting the first job this thread enqueues during it run at once instead
    /// of being queued.
    public func runningInline(_ body: () -> Void) {
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        body()
        pthread_setspecific(key, nil)
    }

    /// Calls `body`, asking that the handlers it wakes carry on on their connections' own
    /// server threads, which wake anyway to send the answers, instead of here or on
    /// Dispatch's pool. The SQLite writer wakes its handlers so after a commit: they then
    /// run in parallel while it commits the next batch. A Redis lane does not: a handler
    /// makes several Redis calls per request, each of which would then cost a suspend and a
    /// resume of its connection (two `epoll_ctl` calls and a wake-up); it runs its handlers
    /// inline instead.
    public func handingOff(_ body: () -> Void) {
        pthread_setspecific(handOffKey, UnsafeRawPointer(bitPattern: 1))
        body()
        pthread_setspecific(handOffKey, nil)
    }

    /// Whether this thread is inside `handingOff`.
    public var isHandingOff: Bool { pthread_getspecific(handOffKey) != nil }

    /// True, once, for the first job enqueued on this thread inside `runningInline`: that job
    /// may run at once. The executor placing it asks.
    public func claimInlineTurn() -> Bool {
        guard pthread_getspecific(key) != nil else { return false }
        pthread_setspecific(key, nil)
        return true
    }
}
