internal import Synchronization

/// Lets one recurring event through to the log at most once per interval, with the number of
/// times it happened since the last line. A dependency that fails for every request (the store
/// down, the connection limit reached) then writes a line a second instead of one per request,
/// and the count still says how much was lost.
public final class LogThrottle: Sendable {
    private let interval: Duration
    private let state = Mutex<(count: Int, lastWritten: ContinuousClock.Instant?)>((0, nil))

    public init(interval: Duration = .seconds(1)) {
        self.interval = interval
    }

    /// Counts one occurrence. Returns how many to report, this one included, when a line is
    /// due; nil while the interval since the last line runs.
    public func occurrence(at now: ContinuousClock.Instant = .now) -> Int? {
        state.withLock { state in
            state.count += 1
            if let last = state.lastWritten, now - last < interval { return nil }
            defer {
                state.count = 0
                state.lastWritten = now
            }
            return state.count
        }
    }
}
