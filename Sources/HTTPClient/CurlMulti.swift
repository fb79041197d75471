internal import CCurl
internal import GatehouseCore
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Owns the libcurl multi handle and the single pthread that drives it.
///
/// `@unchecked Sendable` because it owns the raw CURLM pointer. libcurl
/// requires a multi handle to be used by one thread at a time: every call
/// on `multi` happens on the worker thread, except `curl_multi_wakeup`,
/// which libcurl documents as callable from any thread, and which we only
/// issue while holding `inbox` before shutdown is flagged, so it can never
/// race with `curl_multi_cleanup`. All cross-thread state is in `inbox`
/// (Mutex), `worker` (Mutex) and `opened` (Atomic).
final class CurlMulti: @unchecked Sendable {
    /// Work handed to the worker thread by other threads.
    private struct Inbox {
        var added: [EasyHandle] = []
        var cancelled: [EasyHandle] = []
        var isShutdown = false
        /// The worker found nothing queued and is waiting, or about to wait, in
        /// `curl_multi_poll`. Only then does new work need `curl_multi_wakeup`: a worker that
        /// is not waiting looks at the inbox before it next waits, and a wakeup sent anyway
        /// costs the sender a syscall and the worker a wasted pass through its loop.
        var workerWaiting = false
    }

    private struct Worker {
        var thread: pthread_t?
        /// Once started, the worker (not deinit) cleans up `multi`.
        var started = false
    }

    private let multi: UnsafeMutableRawPointer
    private let inbox = Mutex(Inbox())
    private let worker = Mutex(Worker())
    private let opened = Atomic<Int>(0)

    /// Upper bound on one blocking wait; libcurl's own timers shorten it and
    /// `curl_multi_wakeup` interrupts it.
    private static let pollTimeoutMilliseconds: Int32 = 1000

    private init(multi: UnsafeMutableRawPointer) {
        self.multi = multi
    }

    /// Creates the multi handle, applies the pool limits and starts the
    /// worker thread.
    static func start(configuration: HTTPClient.Configuration) throws(HTTPClientError) -> CurlMulti {
        guard CurlGlobal.isInitialized else { throw .transport("curl_global_init failed") }
        guard let multi = curl_multi_init() else { throw .transport("curl_multi_init failed") }
        let engine = CurlMulti(multi: multi)  // deinit now owns `multi`
        try engine.setLimit(CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnectionsPerHost)
        try engine.setLimit(CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maxTotalConnections)
        // Size of the idle pool; beyond it libcurl closes the oldest.
        try engine.setLimit(CURLMOPT_MAXCONNECTS, configuration.maxTotalConnections)
        try engine.startWorker()
        return engine
    }

    deinit {
        if !worker.withLock({ $0.started }) {
            curl_multi_cleanup(multi)
        }
    }

    /// Total new connections opened by finished or abandoned transfers.
    var connectionsOpened: Int {
        opened.load(ordering: .relaxed)
    }

    /// Queues a configured handle. After shutdown the handle is failed
    /// immediately instead, since no thread would ever pick it up.
    func submit(_ handle: EasyHandle) {
        let accepted = inbox.withLock { inbox in
            guard !inbox.isShutdown else { return false }
            inbox.added.append(handle)
            if inbox.workerWaiting { _ = curl_multi_wakeup(multi) }
            return true
        }
        if !accepted {
            handle.completion.resolve(.failure(.shutdown))
        }
    }

    /// Asks the worker to detach a handle whose task was cancelled; the
    /// task itself has already been resumed.
    func cancel(_ handle: EasyHandle) {
        inbox.withLock { inbox in
            guard !inbox.isShutdown else { return }
            inbox.cancelled.append(handle)
            if inbox.workerWaiting { _ = curl_multi_wakeup(multi) }
        }
    }

    /// Fails every queued and in-flight request with `.shutdown`, then waits
    /// for the worker to exit. Idempotent: only the first call joins.
    func shutdown() {
        let first = inbox.withLock { inbox in
            guard !inbox.isShutdown else { return false }
            inbox.isShutdown = true
            _ = curl_multi_wakeup(multi)
            return true
        }
        guard first, let thread = worker.withLock({ $0.thread.take() }) else { return }
        if pthread_equal(thread, pthread_self()) != 0 {
            // Never reached today (no user code runs on the worker), but a
            // self-join would deadlock, so detach instead.
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    private func setLimit(_ option: CURLMoption, _ value: Int) throws(HTTPClientError) {
        let rc = shim_multi_setopt_long(multi, option, value)
        guard rc == CURLM_OK else {
            throw .transport("curl_multi_setopt(\(option.rawValue)) failed: \(String(cString: curl_multi_strerror(rc)))")
        }
    }

    private func startWorker() throws(HTTPClientError) {
        // +1 for the thread; CurlCallbacks.workerEntry takes it over.
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, CurlCallbacks.workerEntry, context)
        guard rc == 0 else {
            Unmanaged<CurlMulti>.fromOpaque(context).release()
            throw .transport("pthread_create failed: \(rc)")
        }
        worker.withLock {
            $0.thread = thread
            $0.started = true
        }
    }

    // MARK: - Worker thread

    /// The worker loop. Everything below runs on the worker thread only.
    func runLoop() {
        // Strong references to every handle currently inside libcurl; this
        // is what keeps the unretained callback contexts valid.
        var active: [ObjectIdentifier: EasyHandle] = [:]
        var stillRunning: Int32 = 0

        while true {
            let (added, cancelled, stopping) = inbox.withLock { inbox in
                defer {
                    inbox.added.removeAll()
                    inbox.cancelled.removeAll()
                    // Awake again: senders until here may have woken a poll that has already
                    // returned; their wakeup only makes the next poll return at once.
                    inbox.workerWaiting = false
                }
                return (inbox.added, inbox.cancelled, inbox.isShutdown)
            }

            for handle in added {
                if stopping {
                    handle.completion.resolve(.failure(.shutdown))
                } else if !handle.completion.isResolved {
                    let rc = curl_multi_add_handle(multi, handle.easy)
                    if rc == CURLM_OK {
                        active[ObjectIdentifier(handle)] = handle
                    } else {
                        let text = String(cString: curl_multi_strerror(rc))
                        handle.completion.resolve(.failure(.transport("curl_multi_add_handle failed: \(text)")))
                    }
                }
                // A handle whose task was cancelled before this point is
                // simply dropped; its deinit frees it.
            }
            for handle in cancelled where active.removeValue(forKey: ObjectIdentifier(handle)) != nil {
                detach(handle)
            }
            if stopping {
                for handle in active.values {
                    detach(handle)
                    handle.completion.resolve(.failure(.shutdown))
                }
                active.removeAll()
                break
            }

            _ = curl_multi_perform(multi, &stillRunning)
            drainFinished(&active)

            // Work that arrived while this pass ran is taken now, not after a wait; otherwise
            // the flag is set under the same lock the senders check, so any later sender wakes
            // the poll (a wakeup sent before the poll starts still makes it return at once).
            let mayWait = inbox.withLock { inbox in
                guard inbox.added.isEmpty, inbox.cancelled.isEmpty, !inbox.isShutdown else { return false }
                inbox.workerWaiting = true
                return true
            }
            guard mayWait else { continue }
            if curl_multi_poll(multi, nil, 0, Self.pollTimeoutMilliseconds, nil) != CURLM_OK {
                // Should not happen; avoid spinning if it does.
                usleep(10_000)
            }
        }
        // Handles are all detached, so this only closes pooled connections.
        curl_multi_cleanup(multi)
    }

    /// Delivers every transfer libcurl reports as done.
    private func drainFinished(_ active: inout [ObjectIdentifier: EasyHandle]) {
        InlineResumption.shared.batching { drainFinishedBatch(&active) }
    }

    private func drainFinishedBatch(_ active: inout [ObjectIdentifier: EasyHandle]) {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let result = message.pointee.data.result
            // CURLOPT_PRIVATE maps the CURL* back to its owner. The pointer
            // is unretained, but `easy` is still inside the multi, so its
            // owner is still in `active` and alive.
            guard let handle = EasyHandle.owner(of: easy),
                  active.removeValue(forKey: ObjectIdentifier(handle)) != nil
            else {
                _ = curl_multi_remove_handle(multi, easy)
                continue
            }
            detach(handle)
            // A request handler waiting for this answer continues here rather than on a pool
            // thread (see InlineResumption); other waiters are unaffected.
            let outcome = handle.outcome(for: result)
            InlineResumption.shared.runningInline { handle.completion.resolve(outcome) }
        }
    }

    /// Removes a handle from libcurl (returning its connection to the pool)
    /// and records how many connections it opened.
    private func detach(_ handle: EasyHandle) {
        _ = curl_multi_remove_handle(multi, handle.easy)
        opened.add(handle.connectionsOpened, ordering: .relaxed)
    }
}
