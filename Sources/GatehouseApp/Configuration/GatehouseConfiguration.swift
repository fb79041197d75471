public import GatehouseCore
public import HTTPServer

/// Every setting of interface.md §1, typed and already validated.
public struct GatehouseConfiguration: Sendable {
    public var listen: ListenAddress
    /// Callbacks are `{publicURL}/auth`; no trailing slash.
    public var publicURL: String
    public var store: StoreLocation
    /// Provider directories; a later one overrides an earlier one's ids.
    public var providerDirectories: [String]
    /// The bearer token of `/api/admin/*`; nil turns the admin API off (404).
    public var adminToken: String?
    /// The 32-byte key that seals secrets at rest; nil means "use or create the data dir's key".
    public var masterKey: [UInt8]?
    public var logLevel: Logger.Level
    public var logFormat: StreamLogHandler.Format
    /// Seconds a started login may wait for the provider callback (OAuth.io: 20 minutes).
    public var stateTTL: Int
    /// Seconds a server-side login's one-time code stays redeemable.
    public var codeTTL: Int
    /// Seconds one proxied API call (`/request`, `me`) may take before the caller gets 504.
    public var upstreamTimeout: Int
    /// Bytes of request line and headers one request may carry (`HTTPServer.Configuration`
    /// says how they count; each connection's memory is this and a little more, zeroed after
    /// every request: the default keeps that cheap).
    public var maxHeaderBytes: Int
    /// Token buckets on the entry points that spend a provider call without the app secret
    /// (native sign-ins with the public key, OAuth 1 and pushed-authorization starts): one per
    /// app and one per client address; nil turns that one off.
    public var rateLimitApp: BucketRule?
    public var rateLimitAddress: BucketRule?
    /// Proxies whose `X-Forwarded-For` names the client; from anyone else it is ignored.
    public var trustedProxies: [AddressRange]

    public static let defaultRateLimitApp = BucketRule(capacity: 20, perSecond: 20)
    public static let defaultRateLimitAddress = BucketRule(capacity: 30, perSecond: 0.5)

    public init(
        listen: ListenAddress, publicURL: String, store: StoreLocation, providerDirectories: [String],
        adminToken: String?, masterKey: [UInt8]?, logLevel: Logger.Level, logFormat: StreamLogHandler.Format,
        stateTTL: Int = 1200, codeTTL: Int = 600, upstreamTimeout: Int = 15,
        maxHeaderBytes: Int = HTTPServer.Configuration.defaultMaxHeaderBytes,
        rateLimitApp: BucketRule? = defaultRateLimitApp, rateLimitAddress: BucketRule? = defaultRateLimitAddress,
        trustedProxies: [AddressRange] = []
    ) {
        self.rateLimitApp = rateLimitApp
        self.rateLimitAddress = rateLimitAddress
        self.trustedProxies = trustedProxies
        self.maxHeaderBytes = maxHeaderBytes
        self.upstreamTimeout = upstreamTimeout
        self.stateTTL = stateTTL
        self.codeTTL = codeTTL
        self.listen = listen
        self.publicURL = publicURL
        self.store = store
        self.providerDirectories = providerDirectories
        self.adminToken = adminToken
        self.masterKey = masterKey
        self.logLevel = logLevel
        self.logFormat = logFormat
    }
}

/// Where apps, keysets and flow records are kept.
public enum StoreLocation: Sendable, Hashable, CustomStringConvertible {
    /// Process memory; gone at exit.
    case memory
    /// An SQLite file (WAL mode).
    case sqlite(path: String)
    /// A Redis server shared by many gateway processes, with the credentials for `AUTH` when
    /// the URL carries them (`redis://[user:]password@host:port/db`).
    case redis(host: String, port: Int, database: Int, username: String? = nil, password: String? = nil)

    /// Parses `memory:`, `sqlite:PATH` or `redis://[[USER]:PASSWORD@]HOST:PORT/DB` (the
    /// credentials percent-encoded, as in any URL).
    public init?(_ text: String) {
        if text == "memory:" {
            self = .memory
        } else if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty, !path.contains("\0") else { return nil }
            self = .sqlite(path: path)
        } else if text.hasPrefix("redis://") {
            var rest = text.dropFirst("redis://".count)
            var username: String?
            var password: String?
            if let at = rest.lastIndex(of: "@") {
                let credentials = rest[..<at]
                rest = rest[rest.index(after: at)...]
                let pieces = credentials.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                guard let user = PercentEncoding.decode(pieces[0]) else { return nil }
                if pieces.count > 1 {
                    guard let secret = PercentEncoding.decode(pieces[1]), !secret.isEmpty else { return nil }
                    username = user.isEmpty ? nil : user
                    password = secret
                } else {
                    // `redis://secret@host`: a lone credential is the password, as redis-cli reads it.
                    guard !user.isEmpty else { return nil }
                    password = user
                }
            }
            let parts = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            let hostPort = parts[0]
            let database = parts.count > 1 ? (parts[1].isEmpty ? 0 : Int(parts[1])) : 0
            guard let database, database >= 0 else { return nil }
            let host: Substring
            let port: Int?
            if let colon = hostPort.lastIndex(of: ":") {
                host = hostPort[..<colon]
                port = Int(hostPort[hostPort.index(after: colon)...])
            } else {
                host = hostPort
                port = 6379
            }
            guard let port, (1...65535).contains(port), !host.isEmpty else { return nil }
            self = .redis(host: String(host), port: port, database: database, username: username, password: password)
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .memory: "memory:"
        case .sqlite(let path): "sqlite:\(path)"
        // Never the password: this text reaches logs and error messages.
        case .redis(let host, let port, let database, let username, let password):
            "redis://\(password == nil ? "" : (username ?? "") + ":***@")\(host):\(port)/\(database)"
        }
    }

    /// The short backend name for logs and metrics.
    public var kind: String {
        switch self {
        case .memory: "memory"
        case .sqlite: "sqlite"
        case .redis: "redis"
        }
    }
}
