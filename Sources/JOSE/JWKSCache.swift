public import GatehouseCore
internal import Synchronization

/// Keeps each provider's JWKS as ready-built keys, refreshing it when it ages out or when a
/// token names a key it does not hold, without letting tokens dictate how often the
/// provider is asked.
///
/// - Concurrent misses for one URL share a single fetch.
/// - A `kid` not in the set triggers a refetch at most once per `minimumRefetchInterval`, so a
///   flood of made-up key ids costs the provider one request a minute, not one per token.
/// - When a refresh fails, the previous keys keep being served; with no keys at all, another
///   attempt waits `failureRetryInterval`.
public actor JWKSCache {
    /// Fetches the JWKS document at a URL (the gateway plugs in its HTTP client).
    public typealias Fetcher = @Sendable (String) async throws -> [UInt8]

    /// Timing and size limits, in seconds and bytes.
    public struct Configuration: Sendable {
        /// How long a fetched set is used before it is fetched again.
        public var timeToLive: Int64
        /// The least time between two fetches of one URL prompted by unknown key ids.
        public var minimumRefetchInterval: Int64
        /// How long to wait after a failed fetch before trying again when no keys are held.
        public var failureRetryInterval: Int64
        /// The largest JWKS document accepted.
        public var maximumDocumentSize: Int

        /// Defaults: keep sets for an hour, refetch on unknown kids at most once a minute,
        /// retry failures after 5 s, accept documents up to 256 KiB.
        public init(
            timeToLive: Int64 = 3600, minimumRefetchInterval: Int64 = 60, failureRetryInterval: Int64 = 5,
            maximumDocumentSize: Int = 256 * 1024
        ) {
            self.timeToLive = timeToLive
            self.minimumRefetchInterval = minimumRefetchInterval
            self.failureRetryInterval = failureRetryInterval
            self.maximumDocumentSize = maximumDocumentSize
        }
    }

    private struct Entry: Sendable {
        let keys: KeySet
        let fetchedAt: Int64
    }

    private let configuration: Configuration
    private let fetcher: Fetcher
    private let now: @Sendable () -> Int64
    private let logger: Logger
    private var entries: [String: Entry] = [:]
    private var lastAttempt: [String: Int64] = [:]
    private var lastMissRefetch: [String: Int64] = [:]
    private var lastFailure: [String: Int64] = [:]
    private var inFlight: [String: Task<KeySet, any Error>] = [:]
    /// The sets as last fetched, readable without entering the actor: nearly every call is a
    /// hit, and an actor hop would cost more than the signature check it precedes.
    private nonisolated let published = Mutex<[String: Entry]>([:])

    /// A cache that loads sets through `fetcher`. `now` returns seconds since the epoch.
    public init(
        configuration: Configuration = Configuration(),
        now: @escaping @Sendable () -> Int64 = { Timestamp.now() },
        logger: Logger = .silent(label: "jose"),
        fetcher: @escaping Fetcher
    ) {
        self.configuration = configuration
        self.now = now
        self.logger = logger
        self.fetcher = fetcher
    }

    /// The keys for the JWKS at `url` if they are fresh and hold `kid`; nil when only the
    /// actor can decide (a fetch, a refetch for an unknown kid, a failure to account for).
    public nonisolated func freshKeys(for url: String, kid: String?) -> KeySet? {
        let current = now()
        let lifetime = configuration.timeToLive
        return published.withLock { entries -> KeySet? in
            guard let entry = entries[url], current - entry.fetchedAt < lifetime, kid.map(entry.keys.contains(kid:)) ?? true
            else { return nil }
            return entry.keys
        }
    }

    /// The keys for the JWKS at `url`, fetched or refreshed as needed. `kid` is the key id the
    /// caller is about to look for (nil if the token has none); a miss may trigger a refetch.
    /// The returned set may still lack `kid`: the verifier then reports an unknown key.
    public func keys(for url: String, kid: String?) async throws(JOSEError) -> KeySet {
        try await keys(for: url, holding: { keys in kid.map(keys.contains(kid:)) ?? true })
    }

    /// As `keys(for:kid:)`, for a caller looking for something other than a `kid`: a set that
    /// fails `holding` counts as a miss, with the same rate-limited refetch.
    public func keys(for url: String, holding: @Sendable (KeySet) -> Bool) async throws(JOSEError) -> KeySet {
        let current = now()
        if inFlight[url] == nil {
            if let entry = entries[url] {
                let fresh = current - entry.fetchedAt < configuration.timeToLive
                let known = holding(entry.keys)
                if fresh && known { return entry.keys }
                if fresh {
                    // Only refetches prompted by a miss (an unknown kid, a missing encryption key)
                    // are rate limited, and the clock starts at the last such refetch: a rotation
                    // right after the first load is still picked up at once, while a flood of
                    // bogus kids costs one fetch a minute.
                    if let last = lastMissRefetch[url], current - last < configuration.minimumRefetchInterval {
                        logger.debug("JWKS refetch skipped: rate limited", ["jwks.url": url])
                        return entry.keys
                    }
                    lastMissRefetch[url] = current
                } else if let failed = lastFailure[url], current - failed < configuration.minimumRefetchInterval {
                    // Expired, and the provider failed within the last minute: serve the stale
                    // set rather than sending every request to a provider that is down.
                    return entry.keys
                }
            } else if let failed = lastFailure[url], current - failed < configuration.failureRetryInterval {
                throw .keySetUnavailable("the provider's key set could not be fetched a moment ago")
            }
        }
        return try await refresh(url)
    }

    /// Joins the fetch already running for `url` or starts one; whoever starts it records
    /// the outcome.
    private func refresh(_ url: String) async throws(JOSEError) -> KeySet {
        let task: Task<KeySet, any Error>
        let owner: Bool
        if let running = inFlight[url] {
            task = running
            owner = false
        } else {
            lastAttempt[url] = now()
            let fetcher = self.fetcher
            let limit = configuration.maximumDocumentSize
            task = Task { try await Self.load(url, fetcher: fetcher, maximumSize: limit) }
            inFlight[url] = task
            owner = true
        }
        do {
            // Awaiting a task's value is not cancelled with the caller, so the owner always
            // gets here and clears the in-flight slot.
            let keys = try await task.value
            if owner {
                inFlight[url] = nil
                lastFailure[url] = nil
                let entry = Entry(keys: keys, fetchedAt: now())
                entries[url] = entry
                published.withLock { $0[url] = entry }
                logger.info("JWKS fetched", ["jwks.url": url, "jwks.keys": String(keys.keys.count), "jwks.skipped": String(keys.skippedCount)])
            }
            return keys
        } catch {
            if owner {
                inFlight[url] = nil
                lastFailure[url] = now()
                logger.warning("JWKS fetch failed", ["jwks.url": url, "error": String(describing: error)])
            }
            if let stale = entries[url] { return stale.keys }
            if let error = error as? JOSEError { throw error }
            throw .keySetUnavailable("the provider's key set could not be fetched", underlying: error)
        }
    }

    /// Fetches and builds a set off the actor: key construction takes tens of microseconds per
    /// key and must not hold up callers that only need a cache hit.
    @concurrent private static func load(_ url: String, fetcher: Fetcher, maximumSize: Int) async throws -> KeySet {
        let body = try await fetcher(url)
        guard body.count <= maximumSize else {
            throw JOSEError.keySetUnavailable("the key set is larger than \(maximumSize) bytes")
        }
        let keys = KeySet(try JWKSet.decode(body))
        guard !keys.keys.isEmpty else { throw JOSEError.keySetUnavailable("the key set holds no usable signature key") }
        return keys
    }
}
