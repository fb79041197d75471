internal import CHiredis
internal import GatehouseCore

/// One decoded Redis reply. Strings stay bytes: records and sealed secrets are binary.
enum RedisReply: Sendable, Equatable {
    case null
    case integer(Int64)
    case bytes([UInt8])
    case status(String)
    case error(String)
    case array([RedisReply])

    var bytesValue: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }

    var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }
}

/// A blocking hiredis connection. This file is the only one that touches hiredis, and a
/// connection is only ever used by the one `RedisLane` thread that owns it, so hiredis' lack
/// of thread safety never matters.
final class RedisConnection {
    private let context: OpaquePointer

    /// Connects, applying `timeoutMilliseconds` to the connect and to every later read and
    /// write; selects `database`.
    init(host: String, port: Int, database: Int, username: String?, password: String?, timeoutMilliseconds: Int) throws(StoreError) {
        guard let made = gh_redis_connect(host, Int32(port), timeoutMilliseconds) else {
            throw .unavailable("redis: cannot allocate a connection")
        }
        context = OpaquePointer(made)
        // From here on a throw runs deinit, which frees the context: never free it here too.
        if made.pointee.err != 0 {
            throw .unavailable("redis: cannot connect to \(host):\(port): \(Self.errorText(made))")
        }
        if let password {
            let command = [Array("AUTH".utf8)] + (username.map { [Array($0.utf8)] } ?? []) + [Array(password.utf8)]
            // Redis' answer names no secret, but it is not echoed anyway.
            if case .error = try execute(command) {
                throw .invalidLocation("redis: authentication to \(host):\(port) was refused")
            }
        }
        if database != 0 {
            if case .error(let text) = try execute([Array("SELECT".utf8), Array(String(database).utf8)]) {
                throw .invalidLocation("redis: cannot select database \(database): \(text)")
            }
        }
    }

    deinit {
        redisFree(UnsafeMutablePointer<redisContext>(context))
    }

    /// Sends one command and waits for its reply. Throws `unavailable` on any I/O failure
    /// (timeout, reset, EOF), after which the connection must be discarded: hiredis leaves a
    /// failed context unusable.
    func execute(_ arguments: [[UInt8]]) throws(StoreError) -> RedisReply {
        try execute(batch: [arguments])[0]
    }

    /// Sends `commands` together, then reads their replies in order: commands queued by
    /// several handlers share one round trip. Fails as a whole, like `execute`.
    func execute(batch commands: [[[UInt8]]]) throws(StoreError) -> [RedisReply] {
        let raw = UnsafeMutablePointer<redisContext>(context)
        for arguments in commands {
            guard Self.append(arguments, to: raw) == REDIS_OK else {
                throw .unavailable("redis: \(Self.errorText(raw))")
            }
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in commands {
            guard let reply = gh_redis_next_reply(raw) else {
                throw .unavailable("redis: \(Self.errorText(raw))")
            }
            defer { freeReplyObject(reply) }
            replies.append(Self.decode(reply))
        }
        return replies
    }

    /// Formats one command into hiredis' output buffer, which copies the arguments.
    private static func append(_ arguments: [[UInt8]], to raw: UnsafeMutablePointer<redisContext>) -> Int32 {
        // One contiguous buffer holds every argument, so each pointer stays valid for the call.
        var joined: [UInt8] = []
        joined.reserveCapacity(arguments.reduce(0) { $0 + $1.count } + 1)
        var offsets: [Int] = []
        var lengths: [Int] = []
        for argument in arguments {
            offsets.append(joined.count)
            lengths.append(argument.count)
            joined.append(contentsOf: argument)
        }
        joined.append(0)
        return joined.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { characters in
                var pointers = [UnsafePointer<CChar>?](repeating: nil, count: offsets.count)
                for (index, offset) in offsets.enumerated() { pointers[index] = characters.baseAddress.map { UnsafePointer($0 + offset) } }
                return pointers.withUnsafeMutableBufferPointer { argv in
                    lengths.withUnsafeBufferPointer { sizes in
                        gh_redis_append(raw, Int32(arguments.count), argv.baseAddress, sizes.baseAddress)
                    }
                }
            }
        }
    }

    private static func decode(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let value = reply.pointee
        switch value.type {
        case REDIS_REPLY_NIL:
            return .null
        case REDIS_REPLY_INTEGER:
            return .integer(Int64(value.integer))
        case REDIS_REPLY_STRING:
            return .bytes(bytes(value.str, value.len))
        case REDIS_REPLY_STATUS:
            return .status(String(decoding: bytes(value.str, value.len), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            return .error(String(decoding: bytes(value.str, value.len), as: UTF8.self))
        case REDIS_REPLY_ARRAY:
            var items: [RedisReply] = []
            items.reserveCapacity(value.elements)
            for index in 0..<value.elements {
                if let element = value.element?[index] { items.append(decode(element)) } else { items.append(.null) }
            }
            return .array(items)
        default:
            return .error("unknown reply type \(value.type)")
        }
    }

    private static func bytes(_ pointer: UnsafeMutablePointer<CChar>?, _ length: Int) -> [UInt8] {
        guard let pointer, length > 0 else { return [] }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            let text = raw.prefix { $0 != 0 }
            return text.isEmpty ? "connection failed" : String(decoding: text, as: UTF8.self)
        }
    }
}
