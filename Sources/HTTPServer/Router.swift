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
        case literal(String)
        case parameter(String)
        case rest(String)
    }

    private struct Route: Sendable {
        let method: String
        let pattern: String
        let segments: [Segment]
        let handler: Handler
    }

    /// The route label of a request no route matched.
    public static let unmatched = "unmatched"

    private var routes: [Route] = []
    /// Fully literal routes by method, then path: no key has to be built per request.
    private var literal: [String: [String: Handler]] = [:]

    public init() {}

    /// Adds a route; `method` is upper case. Earlier routes win when two patterns match.
    public mutating func add(_ method: String, _ pattern: String, _ handler: Handler) {
        let segments: [Segment] = pattern.split(separator: "/").map { part in
            if part.hasPrefix(":") { return .parameter(String(part.dropFirst())) }
            if part.hasPrefix("*") { return .rest(String(part.dropFirst())) }
            return .literal(String(part))
        }
        routes.append(Route(method: method, pattern: pattern, segments: segments, handler: handler))
        if segments.allSatisfy({ if case .literal = $0 { true } else { false } }) {
            let path = "/" + segments.map { if case .literal(let text) = $0 { text } else { "" } }.joined(separator: "/")
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
        // Split on bytes: `String.split` walks grapheme clusters, and paths are ASCII anyway.
        let parts = rawPath.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst().map { Substring($0) }
        var allowed: [String] = []
        for route in routes where Self.fits(route.segments, parts) {
            switch Self.bind(route.segments, to: parts) {
            case .none:
                continue
            case .some(.none):
                return (.badPath, Self.unmatched)
            case .some(.some(let parameters)):
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
    private static func fits(_ segments: [Segment], _ parts: [Substring]) -> Bool {
        var index = 0
        for segment in segments {
            switch segment {
            case .literal(let text):
                guard index < parts.count, parts[index].utf8.elementsEqual(text.utf8) else { return false }
            case .parameter:
                guard index < parts.count, !parts[index].isEmpty else { return false }
            case .rest:
                return index < parts.count
            }
            index += 1
        }
        let remaining = parts.count - index
        return remaining == 0 || (remaining == 1 && parts[index].isEmpty)
    }

    /// nil: no match; .some(nil): matched but a segment does not decode; otherwise the parameters.
    private static func bind(_ segments: [Segment], to parts: [Substring]) -> [String: String]?? {
        var parameters: [String: String] = [:]
        var index = 0
        for segment in segments {
            switch segment {
            case .literal(let text):
                guard index < parts.count, parts[index].utf8.elementsEqual(text.utf8) else { return nil }
            case .parameter(let name):
                guard index < parts.count, !parts[index].isEmpty else { return nil }
                guard let value = PercentEncoding.decode(parts[index]) else { return .some(nil) }
                parameters[name] = value
            case .rest(let name):
                guard index < parts.count else { return nil }
                parameters[name] = parts[index...].joined(separator: "/")
                return .some(parameters)
            }
            index += 1
        }
        // A trailing slash is the same resource; anything more is not this route.
        let remaining = parts.count - index
        guard remaining == 0 || (remaining == 1 && parts[index].isEmpty) else { return nil }
        return .some(parameters)
    }
}
