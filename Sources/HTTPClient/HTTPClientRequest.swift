/// A fully buffered request. Bodies are small in Gatehouse (token and
/// introspection calls), so buffering keeps the API free of streaming and
/// lets libcurl copy the bytes once.
public struct HTTPClientRequest: Sendable {
    /// Upper-case method name. Restricted at execution time to GET, POST,
    /// PUT, PATCH, DELETE, HEAD and OPTIONS so that arbitrary strings never
    /// reach the request line.
    public var method: String
    /// Absolute `http://` or `https://` URL; any other scheme is rejected
    /// before libcurl sees it, so `file://` can never read local files.
    public var url: String
    /// Extra request headers, sent in order. Names and values containing
    /// CR, LF or NUL are rejected to prevent header injection.
    public var headers: [HTTPHeader]
    /// Request body, sent byte-exact with a Content-Length. `nil` for POST,
    /// PUT and PATCH still sends `Content-Length: 0`.
    public var body: [UInt8]?
    /// Per-request total deadline; overrides `Configuration.totalTimeout`
    /// for calls whose latency budget differs from the client default.
    public var timeout: Duration?
    /// Off by default because following redirects can silently change the
    /// host a credential-bearing request reaches. When on, at most 5 hops.
    public var followRedirects: Bool

    /// Defaults describe a plain GET so call sites only state what differs.
    public init(
        method: String = "GET",
        url: String,
        headers: [HTTPHeader] = [],
        body: [UInt8]? = nil,
        timeout: Duration? = nil,
        followRedirects: Bool = false
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.followRedirects = followRedirects
    }
}
