internal import GatehouseCore
internal import HTTPServer

/// Token buckets in front of every entry point that spends a provider call (a vendor's paid
/// number lookup, Apple's code exchange, an OAuth 1 request token, a pushed authorization)
/// for a caller who holds only the app's public key: one bucket per client address, then one
/// per app. They live in the store, so instances sharing Redis share them.
struct RateLimits: Sendable {
    enum Entry: String, Sendable {
        case native
        case oauth1Start = "oauth1_start"
        case pushedStart = "pushed_start"
    }

    /// An empty bucket: the caller may try again after `retryAfter` seconds.
    struct Refusal: Error, Sendable {
        var retryAfter: Int
        /// Which bucket was empty, `address` or `app`; nil when the store could not be asked.
        var scope: String?

        var message: String {
            scope == nil ? "The store is unavailable" : "Too many sign-ins; try again in \(retryAfter) s"
        }

        /// 429 JSON with `Retry-After` (503 when the store could not be asked).
        var response: HTTPResponse {
            guard scope != nil else { return .error(503, "store_unavailable", "the store is unavailable") }
            var response = HTTPResponse.error(429, "rate_limited", "too many sign-ins; try again in \(retryAfter) s")
            response.headers.add("Retry-After", String(retryAfter))
            return response
        }
    }

    let context: GatewayContext

    /// Spends a token from the client's bucket, then from the app's; refuses when one is empty.
    func admit(_ entry: Entry, appKey: String, request: HTTPRequest) async -> Refusal? {
        let configuration = context.configuration
        let address = Self.clientAddress(request, trusted: configuration.trustedProxies)
        let buckets = [
            ("address", configuration.rateLimitAddress, "address:" + address.description),
            ("app", configuration.rateLimitApp, "app:" + appKey),
        ]
        for (scope, rule, name) in buckets {
            guard let rule else { continue }
            do throws(StoreError) {
                if let wait = try await context.store.spendToken(name, rule: rule) {
                    context.metrics.rateLimited.increment(entry.rawValue, scope)
                    return Refusal(retryAfter: wait, scope: scope)
                }
            } catch {
                return Refusal(retryAfter: 1, scope: nil)
            }
        }
        return nil
    }

    /// The client: the peer, unless it is a trusted proxy; then, walking `X-Forwarded-For`
    /// from its right end (the part the trusted proxies wrote), the first address that is not
    /// one. Anything a client wrote to the left of that is not believed.
    static func clientAddress(_ request: HTTPRequest, trusted: [AddressRange]) -> PeerAddress {
        var client = request.remoteAddress
        guard !trusted.isEmpty else { return client }
        let forwarded = request.headers.values("x-forwarded-for").flatMap { $0.split(separator: ",") }
        for hop in forwarded.reversed() {
            guard trusted.contains(where: { $0.contains(client) }) else { break }
            guard let address = PeerAddress(String(hop).trimmingWhitespace()) else { break }
            client = address
        }
        return client
    }
}
