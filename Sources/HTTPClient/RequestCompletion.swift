import Synchronization

/// Delivers a request's outcome to its awaiting task exactly once.
///
/// Three parties race to finish a request: the multi thread (transfer
/// done or client shut down), the cancellation handler (any thread), and
/// `execute` itself (which may install the continuation after a
/// cancellation already happened). The first `resolve` wins; later ones
/// are ignored, so a CheckedContinuation is never resumed twice.
final class RequestCompletion: Sendable {
    typealias Outcome = Result<HTTPClientResponse, HTTPClientError>

    private struct State {
        var continuation: CheckedContinuation<Outcome, Never>?
        /// Outcome that arrived before the continuation was installed.
        var pending: Outcome?
        var resolved = false
    }

    private enum Delivery {
        case ignored
        case stored
        case resume(CheckedContinuation<Outcome, Never>)
    }

    private let state = Mutex(State())

    /// True once some party has decided the outcome; the multi thread uses
    /// it to skip handles whose task was cancelled before they were added.
    var isResolved: Bool {
        state.withLock { $0.resolved }
    }

    /// Attaches the awaiting task. If the outcome is already known (the task
    /// was cancelled before suspending), resumes immediately.
    func install(_ continuation: CheckedContinuation<Outcome, Never>) {
        let early: Outcome? = state.withLock { state in
            if let pending = state.pending {
                state.pending = nil
                return pending
            }
            state.continuation = continuation
            return nil
        }
        if let early {
            continuation.resume(returning: early)
        }
    }

    /// Records the outcome; returns false if another party got there first.
    /// The continuation is resumed outside the lock so the resumed task can
    /// never contend with it.
    @discardableResult
    func resolve(_ outcome: Outcome) -> Bool {
        let delivery: Delivery = state.withLock { state in
            guard !state.resolved else { return .ignored }
            state.resolved = true
            if let continuation = state.continuation {
                state.continuation = nil
                return .resume(continuation)
            }
            state.pending = outcome
            return .stored
        }
        switch delivery {
        case .ignored:
            return false
        case .stored:
            return true
        case .resume(let continuation):
            continuation.resume(returning: outcome)
            return true
        }
    }
}
