internal import GatehouseCore
internal import Synchronization
#if canImport(Glibc)
internal import Glibc
#endif

/// Answers 504 for deferred handlers that overrun. One sweeper per server checks a table of
/// deadlines a few times a second; a timer task per request would keep a sleeping timer
/// alive for the whole timeout after every request, which costs memory and a thread wake-up.
///
/// The sweeper is a thread of its own (`http-watchdog`), not a task: on Swift's cooperative
/// pool, anything blocking that pool's few threads would hold back the 504s, and the watchdog
/// is there precisely for work that does not come back.
final class Watchdog: Sendable {
    private let pending = Mutex<[ObjectIdentifier: (exchange: Exchange, deadline: ContinuousClock.Instant)]>([:])
    private let running = Atomic<Bool>(true)
    static let intervalMicroseconds: UInt32 = 100_000

    /// Starts sweeping; the thread ends after `stop()` or once the watchdog is gone.
    init() throws(HTTPServerError) {
        let started = ServiceThread.startDetached(name: "http-watchdog") { [weak self] in
            while true {
                usleep(Self.intervalMicroseconds)
                guard let watchdog = self, watchdog.running.load(ordering: .relaxed) else { return }
                watchdog.sweep()
            }
        }
        guard started else { throw .startFailed("cannot start the handler watchdog thread") }
    }

    func stop() { running.store(false, ordering: .relaxed) }

    func watch(_ exchange: Exchange, deadline: ContinuousClock.Instant) {
        pending.withLock { $0[ObjectIdentifier(exchange)] = (exchange, deadline) }
    }

    func forget(_ exchange: Exchange) {
        _ = pending.withLock { $0.removeValue(forKey: ObjectIdentifier(exchange)) }
    }

    private func sweep() {
        let now = ContinuousClock.now
        let expired: [Exchange] = pending.withLock { entries in
            let late = entries.filter { $0.value.deadline <= now }
            for key in late.keys { entries[key] = nil }
            return late.values.map(\.exchange)
        }
        for exchange in expired { exchange.timedOut() }
    }
}
