/// A complete response. Any HTTP status, including 4xx and 5xx, is a
/// response and not an error: callers such as OAuth token exchanges need
/// the error body the server sent.
public struct HTTPClientResponse: Sendable {
    /// Status code of the final response (after redirects, if followed).
    public var status: Int
    /// Headers of the final response only; headers of interim (1xx) and
    /// redirect responses are dropped so lookups cannot pick up stale values.
    public var headers: [HTTPHeader]
    /// Decoded body (gzip/deflate/br are undone by libcurl), never larger
    /// than `Configuration.maxResponseBytes`.
    public var body: [UInt8]

    /// Public so tests and fakes in other modules can build responses.
    public init(status: Int, headers: [HTTPHeader] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// First value of the named header, matched case-insensitively because
    /// HTTP field names are case-insensitive. Repeated fields such as
    /// `Set-Cookie` must be read from `headers`, since joining them with
    /// commas would corrupt their values.
    public func header(_ name: String) -> String? {
        headers.first { $0.hasName(name) }?.value
    }
}
