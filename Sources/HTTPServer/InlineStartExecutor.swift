internal import Dispatch
#if canImport(Glibc)
internal import Glibc
#endif

/// Runs a deferred handler's first stretch on the libmicrohttpd thread that dispatched it.
///
/// Most handlers never really suspend (a cached app, an inline SQLite statement), so starting
/// them on the cooperative pool costs two thread hops plus a suspend/resume of the connection
/// for nothing. A task created under `runningInline` with this executor as its preference has
/// its first job run right here; when the handler finishes without suspending, the caller
/// answers on the same callback. Every later job (after a real suspension: an upstream call,
/// an actor) is enqueued from some other thread and goes to Dispatch's pool, never inline, so a
/// resuming thread (the curl thread, say) never runs handler code.
final class InlineStartExecutor: TaskExecutor, @unchecked Sendable {
    // `@unchecked`: the only state is the thread-local key, set once in init.
    static let shared = InlineStartExecutor()

    private var key = pthread_key_t()
    private let pool = DispatchQueue.global()

    private init() {
        pthread_key_create(&key, nil)
    }

    /// Calls `body`, letting the first job enqueued on this executor by this thread during it
    /// run at once instead of being queued.
    func runningInline(_ body: () -> Void) {
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1))
        body()
        pthread_setspecific(key, nil)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        if pthread_getspecific(key) != nil {
            // Only the task's first job runs inline; nothing it enqueues later may.
            pthread_setspecific(key, nil)
            unowned.runSynchronously(on: asUnownedTaskExecutor())
            return
        }
        pool.async { unowned.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
