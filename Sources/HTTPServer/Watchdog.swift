internal import GatehouseCore
internal import Synchronization

/// Answers 504 for deferred handlers that overrun. One sweeper per server checks a table of
/// deadlines a few times a second; a timer task per request would keep a sleeping timer
/// alive for the whole timeout after every request, which costs memory and a thread wake-up.
final class Watchdog: Sendable {
    private let pending = Mutex<[ObjectIdentifier: (exchange: Exchange, deadline: ContinuousClock.Instant)]>([:])
    private let running = Atomic<Bool>(true)
    static let interval: Duration = .milliseconds(100)

    init() {}

    /// Starts sweeping; the loop ends after `stop()` or once the watchdog is gone.
    func start() {
        Task { [weak self] in
            while let self, self.running.load(ordering: .relaxed) {
                self.sweep()
                try? await Task.sleep(for: Self.interval)
            }
        }
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
