internal import HTTPServer
internal import Synchronization
#if canImport(Glibc)
internal import Glibc
#endif

/// What `GET /metrics` reports, in the Prometheus text format (version 0.0.4).
///
/// Requests and store operations are the hot paths (tens of thousands a second): each thread
/// records into one of several shards chosen by its thread id, so recording is one
/// uncontended lock and a dictionary update. Everything else (upstream calls, JWKS fetches,
/// store errors) happens at most a few times per login and shares one lock per family.
final class Metrics: Sendable {
    /// Upper bounds, in seconds, of the request latency histogram.
    static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    /// Store operations take from microseconds (a memory store, a cached SQLite read) to
    /// milliseconds (a write queued behind the writer's commit, a Redis round trip).
    static let storeBuckets: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

    private struct RequestKey: Hashable, Sendable {
        let method: String
        let route: String
        let status: Int
    }

    /// Methods a client may send are unbounded; labels must not be. A switch rather than a
    /// set: this runs for every request, and hashing the method cost more than comparing it.
    private static func label(_ method: String) -> String {
        switch method {
        case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS": method
        default: "other"
        }
    }

    private let requests = ShardedSeries<RequestKey>(bounds: Metrics.latencyBuckets)
    private let storeOperations = ShardedSeries<String>(bounds: Metrics.storeBuckets)

    let upstream = CounterFamily(
        "gatehouse_upstream_requests_total", help: "Calls to providers, by provider, step and outcome.",
        labels: ["provider", "step", "outcome"])
    let jwksFetches = CounterFamily(
        "gatehouse_jwks_fetches_total", help: "JWKS documents loaded, by source (upstream or the shared store) and outcome.",
        labels: ["source", "outcome"])
    let storeErrors = CounterFamily(
        "gatehouse_store_errors_total", help: "Store operations that failed, by operation and kind.", labels: ["operation", "kind"])
    let rateLimited = CounterFamily(
        "gatehouse_rate_limited_total", help: "Secret-free calls refused with 429, by entry point and the bucket that was empty.",
        labels: ["entry", "scope"])

    /// The HTTP server's completion observer.
    func observe(_ request: RequestObservation) {
        requests.record(RequestKey(method: Self.label(request.method), route: request.route, status: request.status), request.duration)
    }

    /// One store call's duration, as its caller waited for it (queueing included).
    func observeStore(_ operation: String, _ duration: Duration) {
        storeOperations.record(operation, duration)
    }

    /// The exposition text.
    func render() -> String {
        let merged = requests.merged()
        var text = ""
        text += "# HELP gatehouse_http_requests_total Requests answered, by method, route pattern and status (aborted: no answer sent).\n"
        text += "# TYPE gatehouse_http_requests_total counter\n"
        let keys = merged.keys.sorted { ($0.route, $0.method, $0.status) < ($1.route, $1.method, $1.status) }
        for key in keys {
            let labels = Self.labels([("method", key.method), ("route", key.route), ("status", Self.statusLabel(key.status))])
            text += "gatehouse_http_requests_total\(labels) \(merged[key]?.count ?? 0)\n"
        }
        // The histogram is per route and method; statuses are folded together.
        var latency: [String: (method: String, route: String, series: LatencySeries)] = [:]
        for (key, series) in merged {
            let id = key.method + " " + key.route
            var entry = latency[id] ?? (key.method, key.route, LatencySeries(bounds: Self.latencyBuckets))
            entry.series.add(series)
            latency[id] = entry
        }
        text += "# HELP gatehouse_http_request_duration_seconds Time from the request's headers to the end of its answer.\n"
        text += "# TYPE gatehouse_http_request_duration_seconds histogram\n"
        for id in latency.keys.sorted() {
            guard let entry = latency[id] else { continue }
            text += entry.series.render(
                "gatehouse_http_request_duration_seconds", labels: [("method", entry.method), ("route", entry.route)],
                bounds: Self.latencyBuckets)
        }
        let store = storeOperations.merged()
        text += "# HELP gatehouse_store_operation_duration_seconds Time a caller waited for a store operation, queueing included.\n"
        text += "# TYPE gatehouse_store_operation_duration_seconds histogram\n"
        for operation in store.keys.sorted() {
            guard let series = store[operation] else { continue }
            text += series.render(
                "gatehouse_store_operation_duration_seconds", labels: [("operation", operation)], bounds: Self.storeBuckets)
        }
        for family in [upstream, jwksFetches, storeErrors, rateLimited] { text += family.render() }
        return text
    }

    static func statusLabel(_ status: Int) -> String { status == 0 ? "aborted" : String(status) }

    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    /// `{a="x",b="y"}` with values escaped as the format requires.
    static func labels(_ pairs: [(String, String)]) -> String {
        guard !pairs.isEmpty else { return "" }
        return "{" + pairs.map { name, value in
            var escaped = ""
            for character in value {
                switch character {
                case "\\": escaped += "\\\\"
                case "\"": escaped += "\\\""
                case "\n": escaped += "\\n"
                default: escaped.append(character)
                }
            }
            return "\(name)=\"\(escaped)\""
        }.joined(separator: ",") + "}"
    }
}

/// A counter with labels. Label values must come from a small, bounded set (provider ids,
/// step names, outcome words), never from request input.
final class CounterFamily: Sendable {
    let name: String
    let help: String
    let labelNames: [String]
    private let values = Mutex<[[String]: Int]>([:])

    init(_ name: String, help: String, labels: [String]) {
        self.name = name
        self.help = help
        labelNames = labels
    }

    func increment(_ labelValues: String...) {
        values.withLock { $0[labelValues, default: 0] += 1 }
    }

    func render() -> String {
        let copy = values.withLock { $0 }
        var text = "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
        for labelValues in copy.keys.sorted(by: { $0.joined(separator: "\u{0}") < $1.joined(separator: "\u{0}") }) {
            text += "\(name)\(Metrics.labels(Array(zip(labelNames, labelValues)))) \(copy[labelValues] ?? 0)\n"
        }
        return text
    }
}

/// One histogram series: a count, a sum and per-bucket counts (not cumulative; the last slot
/// is +Inf) against bounds its owner keeps.
struct LatencySeries: Sendable {
    var count = 0
    var seconds = 0.0
    var buckets: [Int]

    init(bounds: [Double]) {
        buckets = [Int](repeating: 0, count: bounds.count + 1)
    }

    mutating func record(_ seconds: Double, bounds: [Double]) {
        var bucket = bounds.count
        for (index, bound) in bounds.enumerated() where seconds <= bound {
            bucket = index
            break
        }
        count += 1
        self.seconds += seconds
        buckets[bucket] += 1
    }

    mutating func add(_ other: LatencySeries) {
        count += other.count
        seconds += other.seconds
        for index in buckets.indices { buckets[index] += other.buckets[index] }
    }

    /// The `_bucket` (cumulative), `_sum` and `_count` lines.
    func render(_ name: String, labels: [(String, String)], bounds: [Double]) -> String {
        var text = ""
        var cumulative = 0
        for (index, bound) in bounds.enumerated() {
            cumulative += buckets[index]
            text += "\(name)_bucket\(Metrics.labels(labels + [("le", Metrics.number(bound))])) \(cumulative)\n"
        }
        text += "\(name)_bucket\(Metrics.labels(labels + [("le", "+Inf")])) \(count)\n"
        text += "\(name)_sum\(Metrics.labels(labels)) \(Metrics.number(seconds))\n"
        text += "\(name)_count\(Metrics.labels(labels)) \(count)\n"
        return text
    }
}

/// Histogram series by key, recorded from many threads: each thread writes to the shard its
/// thread id picks, so two threads rarely share a lock; `merged` adds the shards up.
final class ShardedSeries<Key: Hashable & Sendable>: Sendable {
    private final class Shard: Sendable {
        let table = Mutex<[Key: LatencySeries]>([:])
    }

    private let bounds: [Double]
    private let shards: [Shard] = (0..<16).map { _ in Shard() }

    init(bounds: [Double]) {
        self.bounds = bounds
    }

    func record(_ key: Key, _ duration: Duration) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        let shard = shards[Int(truncatingIfNeeded: (UInt64(UInt(pthread_self())) &* 0x9E37_79B9_7F4A_7C15) >> 60) % shards.count]
        shard.table.withLock { table in
            // One in-place access: no copy of the bucket array per call.
            table[key, default: LatencySeries(bounds: bounds)].record(seconds, bounds: bounds)
        }
    }

    func merged() -> [Key: LatencySeries] {
        var total: [Key: LatencySeries] = [:]
        for shard in shards {
            for (key, series) in shard.table.withLock({ $0 }) {
                total[key, default: LatencySeries(bounds: bounds)].add(series)
            }
        }
        return total
    }
}
