import GatehouseCore
import GatehouseCrypto
import JOSE
import Testing

@Suite("JWKS cache")
struct JWKSCacheTests {
    let url = "https://issuer.example/jwks"
    let clock = ManualClock()
    let first: PrivateKey
    let second: PrivateKey

    init() throws {
        first = try PrivateKey(pem: TestKeys.first)
        second = try PrivateKey(pem: TestKeys.second)
    }

    func makeCache(_ provider: FakeProvider) -> JWKSCache {
        let clock = self.clock
        return JWKSCache(now: { clock.now }, fetcher: { url in try await provider.fetch(url) })
    }

    @Test("a set is fetched once and served until its time to live runs out")
    func timeToLive() async throws {
        let provider = FakeProvider(document: try TestKeys.jwks([("k1", first.publicKey)]))
        let cache = makeCache(provider)
        for _ in 0..<5 {
            #expect(try await cache.keys(for: url, kid: "k1").contains(kid: "k1"))
            _ = try await cache.keys(for: url, kid: nil)
        }
        #expect(await provider.fetches == 1)
        clock.advance(3599)
        _ = try await cache.keys(for: url, kid: "k1")
        #expect(await provider.fetches == 1)
        clock.advance(1)
        _ = try await cache.keys(for: url, kid: "k1")
        #expect(await provider.fetches == 2)
    }

    @Test("unknown kids refetch at most once a minute per URL, counted from the last such refetch")
    func unknownKidRateLimit() async throws {
        let provider = FakeProvider(document: try TestKeys.jwks([("k1", first.publicKey)]))
        let cache = makeCache(provider)
        _ = try await cache.keys(for: url, kid: "k1")
        clock.advance(10)
        for index in 0..<200 {
            let keys = try await cache.keys(for: url, kid: "bogus-\(index)")
            #expect(!keys.contains(kid: "bogus-\(index)"))
        }
        #expect(await provider.fetches == 2, "the first unknown kid refetches; the other 199 do not")

        await provider.serve(try TestKeys.jwks([("k1", first.publicKey), ("k2", second.publicKey)]))
        clock.advance(50)
        #expect(try await !cache.keys(for: url, kid: "k2").contains(kid: "k2"), "still inside the minute")
        clock.advance(10)
        #expect(try await cache.keys(for: url, kid: "k2").contains(kid: "k2"))
        #expect(await provider.fetches == 3)
        clock.advance(1)
        _ = try await cache.keys(for: url, kid: "bogus")
        _ = try await cache.keys(for: url, kid: "k2")
        #expect(await provider.fetches == 3)
        _ = try await cache.keys(for: "https://other.example/jwks", kid: "k1")
        #expect(await provider.fetches == 4, "each URL has its own limit")
    }

    @Test("concurrent misses for one URL share a single fetch")
    func sharedFetch() async throws {
        let provider = FakeProvider(document: try TestKeys.jwks([("k1", first.publicKey)]))
        await provider.hold()
        let cache = makeCache(provider)
        let url = self.url
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<20 {
                group.addTask { try await cache.keys(for: url, kid: index % 2 == 0 ? "k1" : "other").contains(kid: "k1") }
            }
            // Give every caller time to reach the cache while the one fetch is held.
            while await provider.fetches == 0 { try await Task.sleep(for: .milliseconds(5)) }
            try await Task.sleep(for: .milliseconds(150))
            #expect(await provider.fetches == 1)
            await provider.release()
            for try await found in group { #expect(found) }
        }
        #expect(await provider.fetches == 1)
    }

    @Test("failures: no keys means an error and a short backoff; known keys keep being served")
    func failures() async throws {
        let provider = FakeProvider(document: try TestKeys.jwks([("k1", first.publicKey)]))
        await provider.fail(true)
        let cache = makeCache(provider)
        await #expect(throws: JOSEError.keySetUnavailable("")) { try await cache.keys(for: url, kid: "k1") }
        await #expect(throws: JOSEError.keySetUnavailable("")) { try await cache.keys(for: url, kid: "k1") }
        #expect(await provider.fetches == 1)
        clock.advance(5)
        await provider.fail(false)
        #expect(try await cache.keys(for: url, kid: "k1").contains(kid: "k1"))
        #expect(await provider.fetches == 2)

        await provider.fail(true)
        clock.advance(3600)
        #expect(try await cache.keys(for: url, kid: "k1").contains(kid: "k1"), "stale keys while the provider is down")
        #expect(await provider.fetches == 3)
        clock.advance(30)
        _ = try await cache.keys(for: url, kid: "k1")
        #expect(await provider.fetches == 3, "no retry within the refetch interval")
        clock.advance(30)
        await provider.fail(false)
        _ = try await cache.keys(for: url, kid: "k1")
        #expect(await provider.fetches == 4)
    }

    @Test("oversized documents and sets without a usable key are refused")
    func badDocuments() async throws {
        let big = FakeProvider(document: Array(#"{"keys":[],"pad":""#.utf8) + [UInt8](repeating: 0x41, count: 300_000) + Array(#""}"#.utf8))
        await #expect(throws: JOSEError.keySetUnavailable("")) { try await makeCache(big).keys(for: url, kid: nil) }
        let empty = FakeProvider(document: Array(#"{"keys":[{"kty":"oct","k":"AAAA"}]}"#.utf8))
        await #expect(throws: JOSEError.keySetUnavailable("")) { try await makeCache(empty).keys(for: url, kid: nil) }
        let garbage = FakeProvider(document: Array("<html>".utf8))
        await #expect(throws: JOSEError.malformed("")) { try await makeCache(garbage).keys(for: url, kid: nil) }
    }

    @Test("the verifier picks up a rotated key through the cache")
    func verifyThroughCache() async throws {
        let provider = FakeProvider(document: try TestKeys.jwks([("k1", first.publicKey)]))
        let cache = makeCache(provider)
        let clock = self.clock
        let verifier = JWTVerifier(issuer: "https://issuer.example", audience: "client-1", algorithms: [.es256], now: { clock.now })
        let claims = try TestKeys.json([
            "iss": "https://issuer.example", "aud": "client-1", "sub": "u", "exp": .number(Double(clock.now + 600)),
        ])
        let old = try TestKeys.token(header: #"{"alg":"ES256","kid":"k1"}"#, claims: claims, key: first)
        let rotated = try TestKeys.token(header: #"{"alg":"ES256","kid":"k2"}"#, claims: claims, key: second)
        _ = try await verifier.verify(old, using: cache, url: url)
        await provider.serve(try TestKeys.jwks([("k2", second.publicKey)]))
        // A rotation right after the first load is picked up at once: the first unknown kid refetches.
        #expect(try await verifier.verify(rotated, using: cache, url: url).sub == "u")
        #expect(await provider.fetches == 2)
        let bogus = try TestKeys.token(header: #"{"alg":"ES256","kid":"k3"}"#, claims: claims, key: second)
        clock.advance(60)
        await #expect(throws: JOSEError.unknownKey("")) { try await verifier.verify(bogus, using: cache, url: url) }
        await #expect(throws: JOSEError.unknownKey("")) { try await verifier.verify(bogus, using: cache, url: url) }
        #expect(await provider.fetches == 3, "exactly one refetch for the unknown kid, then an error")
    }
}
