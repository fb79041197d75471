internal import Synchronization

/// A token bucket's shape: it holds `capacity` tokens and gains `perSecond` of them a second.
public struct BucketRule: Sendable, Hashable, CustomStringConvertible {
    public var capacity: Int
    public var perSecond: Double

    public init(capacity: Int, perSecond: Double) {
        self.capacity = max(1, capacity)
        self.perSecond = perSecond > 0 ? perSecond : 1
    }

    /// The rule's text as configured: `N/s`, `N/min` or `N/h` (N tokens, refilled over the unit).
    public var description: String {
        for (unit, seconds) in [("s", 1.0), ("min", 60.0), ("h", 3600.0)] where Double(capacity) / seconds == perSecond {
            return "\(capacity)/\(unit)"
        }
        return "\(capacity) at \(perSecond)/s"
    }

    /// Seconds until a bucket holding `tokens` has one, rounded up; at least 1.
    func secondsUntilToken(_ tokens: Double) -> Int {
        max(1, Int(((1 - tokens) / perSecond).rounded(.up)))
    }
}

/// Token buckets in process memory, for the stores one process owns (memory, SQLite).
public final class TokenBuckets: Sendable {
    private struct Bucket {
        var tokens: Double
        var at: Double
        var rule: BucketRule
    }

    private let buckets = Mutex([String: Bucket]())
    /// Past this many buckets, full ones are dropped: a full bucket is the same as none.
    private static let pruneAt = 10_000

    public init() {}

    /// `Store.spendToken`, at `now` (seconds on any steady clock).
    public func spend(_ name: String, rule: BucketRule, now: Double) -> Int? {
        buckets.withLock { buckets in
            if buckets.count >= Self.pruneAt {
                buckets = buckets.filter { Self.refilled($0.value, now: now) < Double($0.value.rule.capacity) }
            }
            var tokens = buckets[name].map { Self.refilled(Bucket(tokens: $0.tokens, at: $0.at, rule: rule), now: now) }
                ?? Double(rule.capacity)
            defer { buckets[name] = Bucket(tokens: tokens, at: now, rule: rule) }
            guard tokens >= 1 else { return rule.secondsUntilToken(tokens) }
            tokens -= 1
            return nil
        }
    }

    private static func refilled(_ bucket: Bucket, now: Double) -> Double {
        min(Double(bucket.rule.capacity), bucket.tokens + max(0, now - bucket.at) * bucket.rule.perSecond)
    }
}
