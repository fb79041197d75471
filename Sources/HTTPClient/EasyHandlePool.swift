internal import CCurl
import Synchronization

/// Idle libcurl easy handles, reset and ready for the next request.
///
/// A fresh handle costs a zeroed allocation of libcurl's per-transfer state plus its 16 KiB
/// receive and upload buffers, all freed again at cleanup; on a token exchange or a proxied
/// call that churn showed up as allocator work (glibc consolidating its free lists after each
/// large free). `curl_easy_reset` clears every option and all per-request state but keeps
/// those buffers, so a reused handle starts like a new one without the allocations.
/// Connections, DNS and TLS caches live in the multi handle, never in an easy handle, so
/// nothing of one request's peer reaches the next through reuse.
final class EasyHandlePool: Sendable {
    /// A CURL* waiting in the pool; only the pool touches it until it is taken.
    private struct Idle: @unchecked Sendable {
        let easy: UnsafeMutableRawPointer
    }

    private let idle = Mutex<[Idle]>([])
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    deinit {
        for handle in idle.withLock({ $0 }) { curl_easy_cleanup(handle.easy) }
    }

    /// An idle handle, or a new one; nil only when libcurl cannot allocate.
    func take() -> UnsafeMutableRawPointer? {
        idle.withLock { $0.popLast()?.easy } ?? curl_easy_init()
    }

    /// Takes back a handle that is in no multi handle any more: reset and kept, or freed when
    /// the pool is full.
    func give(_ easy: UnsafeMutableRawPointer) {
        curl_easy_reset(easy)
        let kept = idle.withLock { handles -> Bool in
            guard handles.count < capacity else { return false }
            handles.append(Idle(easy: easy))
            return true
        }
        if !kept { curl_easy_cleanup(easy) }
    }
}
