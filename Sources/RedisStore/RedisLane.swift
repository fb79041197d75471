internal import Dispatch
internal import GatehouseCore
internal import Synchronization

/// Where and how to reach Redis.
public struct RedisEndpoint: Sendable, Hashable {
    public var host: String
    public var port: Int
    public var database: Int
    /// `AUTH` credentials (Redis 6 ACL user, or only the password for `requirepass`).
    public var username: String?
    public var password: String?
    /// Limit for connecting and for each command's round trip. Requests see a store failure
    /// (503) instead of hanging once it passes.
    public var timeout: Duration
    /// Connections, each on its own thread.
    public var connections: Int

    /// One connection per two processors. A connection sends whatever its thread finds queued
    /// as one pipeline; in paired login runs on two cores, one connection served about 18%
    /// more logins per second than two, and two about 19% more than four: every further
    /// thread sleeps and wakes for round trips of its own. But a connection's thread also runs
    /// each handler it answers until the handler waits again, which wants more threads as
    /// processors grow.
    public static var defaultConnections: Int { max(1, ServiceThread.processorCount / 2) }

    public init(
        host: String, port: Int, database: Int = 0, username: String? = nil, password: String? = nil,
        timeout: Duration = .milliseconds(500), connections: Int = Self.defaultConnections
    ) {
        self.host = host
        self.port = port
        self.database = database
        self.username = username
        self.password = password
        self.timeout = timeout
        self.connections = connections
    }

    var timeoutMilliseconds: Int {
        let components = timeout.components
        return max(1, Int(components.seconds) * 1000 + Int(components.attoseconds / 1_000_000_000_000_000))
    }
}

/// What the connection threads of one store know together about Redis' health.
///
/// A failure on any connection bumps `generation`, and every connection opened before it is
/// dropped before its next command: after Redis restarts, no thread discovers its own dead
/// socket by failing a request. Reconnection attempts share one backoff (50 ms doubling to
/// 1 s), so a dead server is not hammered by every thread, and the first command that
/// succeeds clears it for all.
final class RedisHealth: Sendable {
    let generation = Atomic<Int>(0)
    private let failures = Atomic<Int>(0)
    private let retryAt = Mutex<ContinuousClock.Instant?>(nil)

    func mayConnect(at now: ContinuousClock.Instant) -> Bool {
        guard failures.load(ordering: .relaxed) > 0 else { return true }
        return retryAt.withLock { $0.map { now >= $0 } ?? true }
    }

    func failed() {
        generation.add(1, ordering: .relaxed)
        let count = failures.add(1, ordering: .relaxed).newValue
        // The first failure may retry at once (a connection Redis dropped while idle).
        let delay: Duration = count > 1 ? .milliseconds(min(1000, 50 << min(count - 2, 5))) : .zero
        retryAt.withLock { $0 = .now + delay }
    }

    func succeeded() {
        if failures.load(ordering: .relaxed) != 0 {
            failures.store(0, ordering: .relaxed)
            retryAt.withLock { $0 = nil }
        }
    }
}

/// One Redis connection and the thread that owns it. hiredis blocks, so commands run here,
/// off the cooperative pool, and callers await them through a continuation.
///
/// A command that fails on I/O (refused, reset, timed out) drops the connection and fails
/// with `unavailable`; while the shared backoff runs, commands fail at once instead of
/// reconnecting. So while Redis is down every request answers quickly, and service resumes
/// by itself within about a second of Redis coming back.
///
/// `@unchecked Sendable`: the job list is behind a mutex; everything else is touched only by
/// the lane's own thread.
final class RedisLane: @unchecked Sendable {
    private struct Job {
        let arguments: [[UInt8]]
        let enqueued: ContinuousClock.Instant
        let continuation: CheckedContinuation<Result<RedisReply, StoreError>, Never>
    }

    private let endpoint: RedisEndpoint
    private let health: RedisHealth
    private let jobs = Mutex<(queue: [Job], head: Int, closed: Bool)>(([], 0, false))
    private let wakeup = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    // Thread-confined state.
    private var connection: RedisConnection?
    private var connectionGeneration = 0

    init(endpoint: RedisEndpoint, health: RedisHealth) {
        self.endpoint = endpoint
        self.health = health
        if !ServiceThread.startDetached(name: "redis-lane", { self.loop() }) {
            // No thread: refuse all work.
            jobs.withLock { $0.closed = true }
            finished.signal()
        }
    }

    /// Jobs waiting, for choosing the least busy lane.
    var backlog: Int { jobs.withLock { $0.queue.count - $0.head } }

    func run(_ arguments: [[UInt8]]) async -> Result<RedisReply, StoreError> {
        await withCheckedContinuation { continuation in
            let accepted = jobs.withLock { state -> Bool in
                guard !state.closed else { return false }
                state.queue.append(Job(arguments: arguments, enqueued: .now, continuation: continuation))
                return true
            }
            if accepted {
                wakeup.signal()
            } else {
                continuation.resume(returning: .failure(.unavailable("the store is closed")))
            }
        }
    }

    /// Fails queued work, stops the thread and waits for it to drop its connection.
    func close() {
        let already = jobs.withLock { state -> Bool in
            defer { state.closed = true }
            return state.closed
        }
        guard !already else { return }
        wakeup.signal()
        finished.wait()
    }

    private func loop() {
        while true {
            wakeup.wait()
            // Everything queued goes out together (up to a bound): commands from several
            // handlers then share one write and one round trip.
            let next: [Job]? = jobs.withLock { state in
                let taken = Array(state.queue[state.head..<min(state.queue.count, state.head + Self.maximumBatch)])
                state.head += taken.count
                if state.head > 64, state.head * 2 > state.queue.count {
                    state.queue.removeFirst(state.head)
                    state.head = 0
                }
                return taken.isEmpty && state.closed ? nil : taken
            }
            guard let next else { break }
            // Each job signalled once; the signals of jobs taken along find the queue empty.
            guard !next.isEmpty else { continue }
            let outcomes = perform(next)
            // Each handler waiting for a reply carries on here until it waits again (most
            // often for its next Redis command), as it does on the HTTP client's thread: a hop
            // to Dispatch's pool cost a thread wake-up per command, and a login makes several.
            InlineResumption.shared.batching {
                for (job, outcome) in zip(next, outcomes) {
                    InlineResumption.shared.runningInline { job.continuation.resume(returning: outcome) }
                }
            }
        }
        connection = nil
        let leftover: [Job] = jobs.withLock { state in
            defer { state.queue = []; state.head = 0 }
            return Array(state.queue[state.head...])
        }
        for job in leftover { job.continuation.resume(returning: .failure(.unavailable("the store is closed"))) }
        finished.signal()
    }

    /// Commands in one pipeline at most, so a long queue still sees its first answers early.
    private static let maximumBatch = 32

    private func perform(_ batch: [Job]) -> [Result<RedisReply, StoreError>] {
        let now = ContinuousClock.now
        // Work that waited behind a stalled command is answered now rather than late.
        let live = batch.indices.filter { now - batch[$0].enqueued <= endpoint.timeout * 2 }
        var outcomes = [Result<RedisReply, StoreError>](
            repeating: .failure(.unavailable("redis: timed out waiting for a connection")), count: batch.count)
        guard !live.isEmpty else { return outcomes }
        switch execute(live.map { batch[$0].arguments }, at: now) {
        case .success(let replies): for (index, reply) in zip(live, replies) { outcomes[index] = .success(reply) }
        case .failure(let error): for index in live { outcomes[index] = .failure(error) }
        }
        return outcomes
    }

    private func execute(_ commands: [[[UInt8]]], at now: ContinuousClock.Instant) -> Result<[RedisReply], StoreError> {
        if connection != nil, health.generation.load(ordering: .relaxed) != connectionGeneration {
            connection = nil
        }
        if connection == nil {
            guard health.mayConnect(at: now) else {
                return .failure(.unavailable("redis: unreachable, retrying shortly"))
            }
            let generation = health.generation.load(ordering: .relaxed)
            do throws(StoreError) {
                connection = try RedisConnection(
                    host: endpoint.host, port: endpoint.port, database: endpoint.database,
                    username: endpoint.username, password: endpoint.password,
                    timeoutMilliseconds: endpoint.timeoutMilliseconds)
                connectionGeneration = generation
            } catch {
                health.failed()
                return .failure(error)
            }
        }
        guard let connection else { return .failure(.unavailable("redis: not connected")) }
        do throws(StoreError) {
            let replies = try connection.execute(batch: commands)
            health.succeeded()
            return .success(replies)
        } catch {
            self.connection = nil
            health.failed()
            return .failure(error)
        }
    }
}
