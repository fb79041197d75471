public import GatehouseCore
internal import Dispatch
internal import Synchronization

/// The shared store for many gateway processes: Redis through hiredis.
///
/// Layout, under a key prefix (default `gatehouse:`):
/// - `app:<key>`: a hash with `name`, `secret` (sealed), `domains` (JSON), `created`;
/// - `apps`: a sorted set of app keys scored by creation time, for listing;
/// - `keysets:<key>`: a hash from provider id to `v1|<response type>|<updated>|<sealed>`;
/// - `rec:<id>`: a short-lived record, written with `SET NX EX` and taken with `GETDEL`
///   (Redis 6.2 or later), both single atomic commands.
/// Changes that touch several keys run as Lua scripts, which Redis executes atomically.
public final class RedisStore: Store {
    private let lanes: [RedisLane]
    private let prefix: String
    private let nextLane = Atomic<Int>(0)

    /// Creates the connection threads. Nothing is contacted yet: connections open on first
    /// use and reopen after failures, so a gateway can start before Redis does.
    public init(endpoint: RedisEndpoint, keyPrefix: String = "gatehouse:") {
        prefix = keyPrefix
        let health = RedisHealth()
        lanes = (0..<max(1, endpoint.connections)).map { _ in RedisLane(endpoint: endpoint, health: health) }
    }

    // MARK: Apps

    public func createApp(_ app: StoredApp) async throws(StoreError) {
        let created = try await integer([
            "EVAL", Self.createAppScript, "2", appKey(app.key), appsKey,
            app.name, app.sealedSecret, try Self.encodeDomains(app.domains), String(app.createdAt), app.key,
        ])
        guard created == 1 else { throw .conflict("an app with this key exists") }
    }

    public func app(key: String) async throws(StoreError) -> StoredApp? {
        let reply = try await command(["HMGET", appKey(key), "name", "secret", "domains", "created"])
        return try Self.decodeApp(key: key, reply)
    }

    public func apps() async throws(StoreError) -> [StoredApp] {
        guard case .array(let members) = try await command(["ZRANGE", appsKey, "0", "-1"]) else {
            throw .corrupt("redis: the app index is not a sorted set")
        }
        var result: [StoredApp] = []
        for member in members {
            guard let key = member.bytesValue.map({ String(decoding: $0, as: UTF8.self) }) else { continue }
            // An app deleted between the two reads is simply not listed.
            if let app = try await app(key: key) { result.append(app) }
        }
        return result
    }

    public func updateApp(_ app: StoredApp) async throws(StoreError) -> Bool {
        try await integer([
            "EVAL", Self.updateAppScript, "1", appKey(app.key),
            app.name, app.sealedSecret, try Self.encodeDomains(app.domains),
        ]) == 1
    }

    public func deleteApp(key: String) async throws(StoreError) -> Bool {
        try await integer(["EVAL", Self.deleteAppScript, "3", appKey(key), keysetsKey(key), appsKey, key]) == 1
    }

    // MARK: Keysets

    public func putKeyset(_ keyset: StoredKeyset, appKey key: String) async throws(StoreError) -> Bool {
        try await integer([
            "EVAL", Self.putKeysetScript, "2", appKey(key), keysetsKey(key), keyset.provider, Self.encodeKeyset(keyset),
        ]) == 1
    }

    public func keyset(appKey key: String, provider: String) async throws(StoreError) -> StoredKeyset? {
        switch try await command(["HGET", keysetsKey(key), provider]) {
        case .null: return nil
        case .bytes(let bytes): return try Self.decodeKeyset(provider: provider, bytes)
        default: throw .corrupt("redis: a keyset is not a string")
        }
    }

    public func keysets(appKey key: String) async throws(StoreError) -> [StoredKeyset] {
        guard case .array(let items) = try await command(["HGETALL", keysetsKey(key)]), items.count % 2 == 0 else {
            throw .corrupt("redis: a keyset hash could not be read")
        }
        var result: [StoredKeyset] = []
        var index = 0
        while index < items.count {
            guard let name = items[index].bytesValue, let value = items[index + 1].bytesValue else {
                throw .corrupt("redis: a keyset hash could not be read")
            }
            result.append(try Self.decodeKeyset(provider: String(decoding: name, as: UTF8.self), value))
            index += 2
        }
        return result.sorted { $0.provider < $1.provider }
    }

    public func deleteKeyset(appKey key: String, provider: String) async throws(StoreError) -> Bool {
        try await integer(["HDEL", keysetsKey(key), provider]) == 1
    }

    // MARK: Records

    public func putRecord(_ id: String, value: [UInt8], ttlSeconds: Int) async throws(StoreError) -> Bool {
        switch try await command(["SET", recordKey(id), value, "EX", String(max(1, ttlSeconds)), "NX"]) {
        case .status: return true
        case .null: return false
        default: throw .corrupt("redis: unexpected answer to SET")
        }
    }

    /// The same `SET NX EX` as `putRecord`: other instances must see the record at once.
    public func putOneTimeRecord(_ id: String, value: [UInt8], ttlSeconds: Int) async throws(StoreError) -> Bool {
        try await putRecord(id, value: value, ttlSeconds: ttlSeconds)
    }

    public func record(_ id: String) async throws(StoreError) -> [UInt8]? {
        try await optionalBytes(["GET", recordKey(id)])
    }

    public func takeRecord(_ id: String) async throws(StoreError) -> [UInt8]? {
        try await optionalBytes(["GETDEL", recordKey(id)])
    }

    public func spendToken(_ name: String, rule: BucketRule) async throws(StoreError) -> Int? {
        let wait = try await integer([
            "EVAL", Self.spendTokenScript, "1", prefix + "bucket:" + name, String(rule.capacity), String(rule.perSecond),
        ])
        return wait > 0 ? Int(wait) : nil
    }

    public func ping() async throws(StoreError) {
        guard case .status = try await command(["PING"]) else { throw .unavailable("redis: unexpected answer to PING") }
    }

    /// Waits (off the cooperative pool) for each connection thread to finish its command.
    public func close() async {
        let lanes = self.lanes
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue(label: "gatehouse.redis.close").async {
                for lane in lanes { lane.close() }
                continuation.resume()
            }
        }
    }

    // MARK: Plumbing

    private var appsKey: String { prefix + "apps" }
    private func appKey(_ key: String) -> String { prefix + "app:" + key }
    private func keysetsKey(_ key: String) -> String { prefix + "keysets:" + key }
    private func recordKey(_ id: String) -> String { prefix + "rec:" + id }

    private func command(_ arguments: [any RedisArgument]) async throws(StoreError) -> RedisReply {
        // The least busy of two lanes: round robin alone would queue behind a stalled one.
        let first = nextLane.add(1, ordering: .relaxed).newValue % lanes.count
        let second = (first + 1) % lanes.count
        let lane = lanes[first].backlog <= lanes[second].backlog ? lanes[first] : lanes[second]
        let reply = try await lane.run(arguments.map(\.redisBytes)).get()
        if case .error(let text) = reply {
            throw .unavailable("redis: \(text.prefix(200))")
        }
        return reply
    }

    private func integer(_ arguments: [any RedisArgument]) async throws(StoreError) -> Int64 {
        guard let value = try await command(arguments).integerValue else { throw .corrupt("redis: expected an integer reply") }
        return value
    }

    private func optionalBytes(_ arguments: [any RedisArgument]) async throws(StoreError) -> [UInt8]? {
        switch try await command(arguments) {
        case .null: return nil
        case .bytes(let bytes): return bytes
        default: throw .corrupt("redis: expected a string reply")
        }
    }

    private static func decodeApp(key: String, _ reply: RedisReply) throws(StoreError) -> StoredApp? {
        guard case .array(let fields) = reply, fields.count == 4 else { throw .corrupt("redis: an app could not be read") }
        if fields.allSatisfy({ $0 == .null }) { return nil }
        guard let name = fields[0].bytesValue, let secret = fields[1].bytesValue, let domainBytes = fields[2].bytesValue,
            let domains = try? JSONCoding.decode([String].self, from: domainBytes),
            let createdBytes = fields[3].bytesValue, let created = Int64(String(decoding: createdBytes, as: UTF8.self))
        else { throw .corrupt("redis: an app could not be read") }
        return StoredApp(key: key, name: String(decoding: name, as: UTF8.self), sealedSecret: secret, domains: domains, createdAt: created)
    }

    private static func encodeDomains(_ domains: [String]) throws(StoreError) -> [UInt8] {
        guard let bytes = try? JSONCoding.encode(domains) else { throw .corrupt("domains could not be encoded") }
        return bytes
    }

    /// `v2|<response type>|<updated>|<device sign-in 1 or 0>|` then the sealed bytes, which may
    /// contain anything. `v1` lacked the device field: those keysets allow device sign-in.
    static func encodeKeyset(_ keyset: StoredKeyset) -> [UInt8] {
        Array("v2|\(keyset.responseType.rawValue)|\(keyset.updatedAt)|\(keyset.deviceSignIn ? 1 : 0)|".utf8) + keyset.sealedParameters
    }

    static func decodeKeyset(provider: String, _ bytes: [UInt8]) throws(StoreError) -> StoredKeyset {
        let bar = UInt8(ascii: "|")
        var fields: [String] = []
        var start = 0
        var index = 0
        var count = 3
        while fields.count < count, index < bytes.count {
            if bytes[index] == bar {
                fields.append(String(decoding: bytes[start..<index], as: UTF8.self))
                start = index + 1
                if fields.count == 1, fields[0] == "v2" { count = 4 }
            }
            index += 1
        }
        guard fields.count == count, fields[0] == "v1" || fields[0] == "v2", let type = ResponseType(rawValue: fields[1]),
            let updated = Int64(fields[2]), count == 3 || fields[3] == "1" || fields[3] == "0"
        else { throw .corrupt("redis: a keyset could not be read") }
        return StoredKeyset(
            provider: provider, sealedParameters: Array(bytes[start...]), responseType: type, updatedAt: updated,
            deviceSignIn: count == 3 || fields[3] == "1")
    }

    // KEYS[1] the bucket hash; ARGV capacity, tokens per second. Redis's own clock, so every
    // gateway process agrees on it; the bucket expires once it would be full again.
    private static let spendTokenScript = """
        local time = redis.call('TIME')
        local now = tonumber(time[1]) + tonumber(time[2]) / 1000000
        local capacity = tonumber(ARGV[1])
        local rate = tonumber(ARGV[2])
        local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
        local tokens = tonumber(state[1]) or capacity
        local at = tonumber(state[2]) or now
        tokens = math.min(capacity, tokens + math.max(0, now - at) * rate)
        local wait = 0
        if tokens >= 1 then tokens = tokens - 1 else wait = math.max(1, math.ceil((1 - tokens) / rate)) end
        redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
        redis.call('EXPIRE', KEYS[1], math.ceil(capacity / rate) + 1)
        return wait
        """

    // KEYS[1] app hash, KEYS[2] app index; ARGV name, secret, domains, created, key.
    private static let createAppScript = """
        if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
        redis.call('HSET', KEYS[1], 'name', ARGV[1], 'secret', ARGV[2], 'domains', ARGV[3], 'created', ARGV[4])
        redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
        return 1
        """
    // KEYS[1] app hash; ARGV name, secret, domains.
    private static let updateAppScript = """
        if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
        redis.call('HSET', KEYS[1], 'name', ARGV[1], 'secret', ARGV[2], 'domains', ARGV[3])
        return 1
        """
    // KEYS[1] app hash, KEYS[2] its keysets, KEYS[3] app index; ARGV key.
    private static let deleteAppScript = """
        local removed = redis.call('DEL', KEYS[1])
        redis.call('DEL', KEYS[2])
        redis.call('ZREM', KEYS[3], ARGV[1])
        return removed
        """
    // KEYS[1] app hash, KEYS[2] its keysets; ARGV provider, encoded keyset.
    private static let putKeysetScript = """
        if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
        redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
        return 1
        """
}

/// What can be a command argument: text or bytes.
protocol RedisArgument {
    var redisBytes: [UInt8] { get }
}

extension String: RedisArgument {
    var redisBytes: [UInt8] { Array(utf8) }
}

extension Array: RedisArgument where Element == UInt8 {
    var redisBytes: [UInt8] { self }
}
