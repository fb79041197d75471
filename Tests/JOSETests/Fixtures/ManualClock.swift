import Synchronization

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let seconds = Atomic<Int64>(1_700_000_000)
    var now: Int64 { seconds.load(ordering: .relaxed) }
    func advance(_ delta: Int64) { seconds.add(delta, ordering: .relaxed) }
}
