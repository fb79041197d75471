internal import GatehouseCore

/// Maps method and path to a handler. Patterns are `/`-separated: a literal segment, `:name`
/// for one segment (percent-decoded before the handler sees it), or a final `*name` for the
/// raw remainder of the path. A fully literal route is found by one dictionary lookup and
/// wins over patterns; among patterns, the earlier one wins.
public struct Router: Sendable {
    /// How a handler produces its response.
    public enum Handler: Sendable {
        /// Runs on the server thread and must not block: health checks, static answers.
        case immediate(@Sendable (HTTPRequest) -> HTTPResponse)
        /// Runs as a task while the connection is suspended: anything touching the store or network.
        case deferred(@Sendable (HTTPRequest) async -> HTTPResponse)
    }

    /// The outcome of a lookup.
    public enum Match: Sendable {
        case found(Handler, parameters: [String: String])
        case methodNotAllowed(allowed: [String])
        case notFound
        /// A path segment had a broken percent-escape.
        case badPath
    }

    private enum Segment: Sendable, Equatable {
        /// The segment's UTF-8: compared byte for byte against the raw path.
        case literal([UInt8])
        case parameter(String)
        case rest(String)
    }

    /// A class so that walking the table retains one reference per route instead of copying
    /// (and retaining) each of its fields.
    private final class Route: Sendable {
        let method: String
        let pattern: String
        let segments: [Segment]
        let handler: Handler

        init(method: String, pattern: String, segments: [Segment], handler: Handler) {
            self.method = method
            self.pattern = pattern
            self.segments = segments
            self.handler = handler
        }
    }

    /// The raw path's bytes and where each segment after the leading `/` lies in them.
    private struct PathParts {
        let bytes: [UInt8]
        let ranges: [Range<Int>]

        init(_ rawPath: String) {
            bytes = Array(rawPath.utf8)
            // Everything before the first `/` (nothing, for an origin-form path) is no segment.
            var ranges: [Range<Int>] = []
            if var start = bytes.firstIndex(of: UInt8(ascii: "/")).map({ $0 + 1 }) {
                // Sized once: growing segment by segment reallocated twice for a usual path.
                ranges.reserveCapacity(bytes[start...].reduce(1) { $1 == UInt8(ascii: "/") ? $0 + 1 : $0 })
                for index in start..<bytes.count where bytes[index] == UInt8(ascii: "/") {
                    ranges.append(start..<index)
                    start = index + 1
                }
                ranges.append(start..<bytes.count)
            }
            self.ranges = ranges
        }

        var count: Int { ranges.count }
        func isEmpty(_ index: Int) -> Bool { ranges[index].isEmpty }
        func matches(_ index: Int, _ literal: [UInt8]) -> Bool {
            let range = ranges[index]
            guard range.count == literal.count else { return false }
            for offset in 0..<literal.count where bytes[range.lowerBound + offset] != literal[offset] { return false }
            return true
        }
        func slice(_ index: Int) -> ArraySlice<UInt8> { bytes[ranges[index]] }
        /// A segment as sent, still percent-encoded.
        func text(_ index: Int) -> String { String(decoding: bytes[ranges[index]], as: UTF8.self) }
        /// Segments from `index` on, joined by `/` as they were sent.
        func remainder(from index: Int) -> String {
            String(decoding: bytes[ranges[index].lowerBound..<ranges[ranges.count - 1].upperBound], as: UTF8.self)
        }
    }

    /// The route label of a request no route matched.
    public static let unmatched = "unmatched"

    /// Pattern routes by their first segment, when it is literal; each list also holds, in
    /// the order added, every route whose first segment is not, so a lookup walks only the
    /// routes that can match instead of the whole table.
    private var byFirstSegment: [String: [Route]] = [:]
    /// Routes whose first segment is a parameter (or that have none): candidates for any path.
    private var anyFirstSegment: [Route] = []
    /// Fully literal routes by method, then path: no key has to be built per request.
    private var literal: [String: [String: Handler]] = [:]

    public init() {}

    /// Adds a route; `method` is upper case. Earlier routes win when two patterns match.
    public mutating func add(_ method: String, _ pattern: String, _ handler: Handler) {
        let segments: [Segment] = pattern.split(separator: "/").map { part in
            if part.hasPrefix(":") { return .parameter(String(part.dropFirst())) }
            if part.hasPrefix("*") { return .rest(String(part.dropFirst())) }
            return .literal(Array(part.utf8))
        }
        let route = Route(method: method, pattern: pattern, segments: segments, handler: handler)
        if case .literal(let text)? = segments.first {
            byFirstSegment[String(decoding: text, as: UTF8.self), default: anyFirstSegment].append(route)
        } else {
            anyFirstSegment.append(route)
            for key in byFirstSegment.keys { byFirstSegment[key, default: []].append(route) }
        }
        if segments.allSatisfy({ if case .literal = $0 { true } else { false } }) {
            let path = "/" + segments.map { if case .literal(let text) = $0 { String(decoding: text, as: UTF8.self) } else { "" } }
                .joined(separator: "/")
            if literal[method, default: [:]][path] == nil { literal[method, default: [:]][path] = handler }
        }
    }

    /// Finds the handler for a raw (still percent-encoded) path.
    public func match(method: String, rawPath: String) -> Match {
        resolve(method: method, rawPath: rawPath).match
    }

    /// The match and the route pattern it came from (`/auth/:provider`), which names the
    /// request in metrics without the unbounded variety of real paths; "unmatched" otherwise.
    public func resolve(method: String, rawPath: String) -> (match: Match, route: String) {
        let trimmed = rawPath.utf8.count > 1 && rawPath.utf8.last == UInt8(ascii: "/") ? String(rawPath.dropLast()) : rawPath
        if let handler = literal[method]?[trimmed] ?? (method == "HEAD" ? literal["GET"]?[trimmed] : nil) {
            return (.found(handler, parameters: [:]), trimmed)
        }
        let parts = PathParts(rawPath)
        let candidates = parts.count > 0 ? byFirstSegment[parts.text(0)] ?? anyFirstSegment : anyFirstSegment
        var allowed: [String] = []
        for route in candidates where Self.fits(route.segments, parts) {
            switch Self.bind(route.segments, to: parts) {
            case .none:
                return (.badPath, Self.unmatched)
            case .some(let parameters):
                if route.method == method || (method == "HEAD" && route.method == "GET") {
                    return (.found(route.handler, parameters: parameters), route.pattern)
                }
                if !allowed.contains(route.method) { allowed.append(route.method) }
            }
        }
        return (allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed), Self.unmatched)
    }

    /// The shape test alone, without decoding or allocating: most routes fail it, and a request
    /// passes every route before its own.
    private static func fits(_ segments: [Segment], _ parts: PathParts) -> Bool {
        var index = 0
        for segment in segments {
            switch segment {
            case .literal(let text):
                guard index < parts.count, parts.matches(index, text) else { return false }
            case .parameter:
                guard index < parts.count, !parts.isEmpty(index) else { return false }
            case .rest:
                return index < parts.count
            }
            index += 1
        }
        let remaining = parts.count - index
        return remaining == 0 || (remaining == 1 && parts.isEmpty(index))
    }

    /// The parameters of a route that `fits`; nil when a segment does not percent-decode.
    private static func bind(_ segments: [Segment], to parts: PathParts) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (index, segment) in segments.enumerated() {
            switch segment {
            case .literal:
                continue
            case .parameter(let name):
                guard let value = PercentEncoding.decode(bytes: parts.slice(index), plusAsSpace: false) else { return nil }
                parameters[name] = value
            case .rest(let name):
                parameters[name] = parts.remainder(from: index)
                return parameters
            }
        }
        return parameters
    }
}
