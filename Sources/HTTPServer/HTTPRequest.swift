public import GatehouseCore

/// A complete request as a handler sees it: headers, decoded query, whole body.
public struct HTTPRequest: Sendable {
    /// Upper-case method, e.g. `GET`.
    public let method: String
    /// The path as it came off the wire, still percent-encoded and without the query.
    public let rawPath: String
    /// Query parameters, decoded, in order.
    public let query: [FormField]
    public let headers: HTTPHeaders
    public let body: [UInt8]
    /// A per-request id, echoed in `X-Request-Id` and attached to every log line.
    public let requestID: String
    /// The peer address, for logs and rate limits.
    public let remoteAddress: PeerAddress
    /// Values the router captured from `:name` and `*name` segments (decoded; `*` stays raw).
    public internal(set) var pathParameters: [String: String] = [:]

    public init(
        method: String, rawPath: String, query: [FormField], headers: HTTPHeaders, body: [UInt8], requestID: String,
        remoteAddress: PeerAddress = .unknown
    ) {
        self.method = method
        self.rawPath = rawPath
        self.query = query
        self.headers = headers
        self.body = body
        self.requestID = requestID
        self.remoteAddress = remoteAddress
    }

    /// The first query value named `name`.
    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// A captured path parameter; routes guarantee the ones they declare.
    public func parameter(_ name: String) -> String {
        pathParameters[name] ?? ""
    }

    /// The media type of the body without parameters, lowercased (`application/json`).
    public var contentType: String {
        guard let value = headers["content-type"] else { return "" }
        // Usually sent exactly as compared (`application/json`): nothing to cut or lower.
        if !value.utf8.contains(where: { $0 == UInt8(ascii: ";") || $0 <= 0x20 || (0x41...0x5A).contains($0) }) { return value }
        // Bytes, not Characters: this runs for every request with a body.
        var bytes = value.utf8.prefix { $0 != UInt8(ascii: ";") }
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        return String(decoding: bytes.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}
