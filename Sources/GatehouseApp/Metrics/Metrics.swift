internal import HTTPServer
internal import Synchronization
#if canImport(Glibc)
internal import Glibc
#endif

/// What `GET /metrics` reports, in the Prometheus text format (version 0.0.4).
///
/// Requests are the hot path (tens of thousands a second): each server thread records into
/// one of several shards chosen by its thread id, so recording is one uncontended lock and a
/// dictionary update. Everything else (upstream calls, JWKS fetches, store errors) happens
/// at most a few times per login and shares one lock per family.
final class Metrics: Sendable {
    /// Upper bounds, in seconds, of the request latency histogram.
    static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private struct RequestKey: Hashable {
        let method: String
        let route: String
        let status: Int
    }

    private struct RequestSeries {
        var count = 0
        var seconds = 0.0
        /// Per bucket, not cumulative; the last slot is +Inf.
        var buckets = [Int](repeating: 0, count: Metrics.latencyBuckets.count + 1)

        mutating func record(bucket: Int, seconds: Double) {
            count += 1
            self.seconds += seconds
            buckets[bucket] += 1
        }
    }

    /// Methods a client may send are unbounded; labels must not be.
    private static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    private final class Shard: Sendable {
        let series = Mutex<[RequestKey: RequestSeries]>([:])
    }

    private let shards: [Shard] = (0..<16).map { _ in Shard() }

    let upstream = CounterFamily(
        "gatehouse_upstream_requests_total", help: "Calls to providers, by provider, step and outcome.",
        labels: ["provider", "step", "outcome"])
    let jwksFetches = CounterFamily(
        "gatehouse_jwks_fetches_total", help: "JWKS documents loaded, by source (upstream or the shared store) and outcome.",
        labels: ["source", "outcome"])
    let storeErrors = CounterFamily(
        "gatehouse_store_errors_total", help: "Store operations that failed, by operation and kind.", labels: ["operation", "kind"])

    /// The HTTP server's completion observer.
    func observe(_ request: RequestObservation) {
        let seconds = Double(request.duration.components.seconds) + Double(request.duration.components.attoseconds) / 1e18
        var bucket = Self.latencyBuckets.count
        for (index, bound) in Self.latencyBuckets.enumerated() where seconds <= bound {
            bucket = index
            break
        }
        let method = Self.knownMethods.contains(request.method) ? request.method : "other"
        let key = RequestKey(method: method, route: request.route, status: request.status)
        let shard = shards[Int(truncatingIfNeeded: (UInt64(UInt(pthread_self())) &* 0x9E37_79B9_7F4A_7C15) >> 60) % shards.count]
        shard.series.withLock { table in
            // One in-place access: no copy of the bucket array per request.
            table[key, default: RequestSeries()].record(bucket: bucket, seconds: seconds)
        }
    }

    /// The exposition text.
    func render() -> String {
        var merged: [RequestKey: RequestSeries] = [:]
        for shard in shards {
            let copy = shard.series.withLock { $0 }
            for (key, series) in copy {
                var total = merged[key, default: RequestSeries()]
                total.count += series.count
                total.seconds += series.seconds
                for index in total.buckets.indices { total.buckets[index] += series.buckets[index] }
                merged[key] = total
            }
        }
        var text = ""
        text += "# HELP gatehouse_http_requests_total Requests answered, by method, route pattern and status (aborted: no answer sent).\n"
        text += "# TYPE gatehouse_http_requests_total counter\n"
        let keys = merged.keys.sorted { ($0.route, $0.method, $0.status) < ($1.route, $1.method, $1.status) }
        for key in keys {
            let labels = Self.labels([("method", key.method), ("route", key.route), ("status", Self.statusLabel(key.status))])
            text += "gatehouse_http_requests_total\(labels) \(merged[key]?.count ?? 0)\n"
        }
        // The histogram is per route and method; statuses are folded together.
        var latency: [String: (method: String, route: String, series: RequestSeries)] = [:]
        for (key, series) in merged {
            let id = key.method + " " + key.route
            var entry = latency[id] ?? (key.method, key.route, RequestSeries())
            entry.series.count += series.count
            entry.series.seconds += series.seconds
            for index in series.buckets.indices { entry.series.buckets[index] += series.buckets[index] }
            latency[id] = entry
        }
        text += "# HELP gatehouse_http_request_duration_seconds Time from the request's headers to the end of its answer.\n"
        text += "# TYPE gatehouse_http_request_duration_seconds histogram\n"
        for id in latency.keys.sorted() {
            guard let entry = latency[id] else { continue }
            var cumulative = 0
            for (index, bound) in Self.latencyBuckets.enumerated() {
                cumulative += entry.series.buckets[index]
                let labels = Self.labels([("method", entry.method), ("route", entry.route), ("le", Self.number(bound))])
                text += "gatehouse_http_request_duration_seconds_bucket\(labels) \(cumulative)\n"
            }
            let base = [("method", entry.method), ("route", entry.route)]
            text += "gatehouse_http_request_duration_seconds_bucket\(Self.labels(base + [("le", "+Inf")])) \(entry.series.count)\n"
            text += "gatehouse_http_request_duration_seconds_sum\(Self.labels(base)) \(Self.number(entry.series.seconds))\n"
            text += "gatehouse_http_request_duration_seconds_count\(Self.labels(base)) \(entry.series.count)\n"
        }
        for family in [upstream, jwksFetches, storeErrors] { text += family.render() }
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
