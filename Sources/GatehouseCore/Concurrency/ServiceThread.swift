#if canImport(Glibc)
internal import Glibc
#endif

/// The threads that serve request threads (the SQLite writer, the HTTP client's libcurl
/// thread, Redis connections): how they start and how they are scheduled.
public enum ServiceThread {
    /// Linux's SCHED_BATCH, which glibc declares only under _GNU_SOURCE.
    private static let schedBatch: Int32 = 3

    /// The processors online, at least one: what thread counts are sized by.
    public static var processorCount: Int {
        max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }

    /// Runs `body` on a new detached thread named `name`, for a component that owns a
    /// blocking loop (a store connection, the SQLite writer); false if the system refused a
    /// thread.
    public static func startDetached(name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        let context = Unmanaged.passRetained(Body {
            setName(name)
            body()
        }).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            Unmanaged<Body>.fromOpaque(argument).takeRetainedValue().run()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    /// Names the calling thread, as `top -H`, `perf` and debuggers show it. A new thread
    /// otherwise inherits its creator's name, which for these is usually a Dispatch
    /// worker's, and that hides which component is busy. glibc declares
    /// `pthread_setname_np` only under _GNU_SOURCE, so this writes the name where that
    /// call does; Linux keeps 15 bytes. Best effort: without /proc the old name stays.
    public static func setName(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = write(descriptor, bytes, bytes.count)
        close(descriptor)
    }

    /// The closure a new thread runs, boxed so that a C thread argument can carry it.
    private final class Body: Sendable {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Puts the calling thread in SCHED_BATCH: when a request thread wakes it, it waits for
    /// a free core or the end of that thread's time slice instead of preempting it. On two
    /// busy cores the waker then queues more work before the service thread runs, so the
    /// writer commits bigger batches and there are fewer context switches. In paired login
    /// benchmark runs this saved about 35 µs of CPU per login. On an idle core it changes
    /// nothing. Best effort: a refusal (a seccomp profile, say) leaves the default policy.
    public static func preferThroughput() {
        var parameters = sched_param()
        parameters.sched_priority = 0
        _ = pthread_setschedparam(pthread_self(), schedBatch, &parameters)
    }
}
