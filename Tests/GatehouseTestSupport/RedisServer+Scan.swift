import Foundation

extension RedisServer {
    /// Every key of every database-0 entry and every value it holds, as raw bytes, for scanning
    /// what reached Redis. A type the script cannot read shows up as `unscanned <type> <key>`,
    /// so a new layout cannot slip past a scan unread.
    public func everyKeyAndValue() async throws -> [UInt8] {
        let script = """
            local out = {}
            for _, key in ipairs(redis.call('KEYS', '*')) do
              out[#out + 1] = key
              local kind = redis.call('TYPE', key).ok
              local values
              if kind == 'string' then values = {redis.call('GET', key)}
              elseif kind == 'hash' then values = redis.call('HGETALL', key)
              elseif kind == 'list' then values = redis.call('LRANGE', key, 0, -1)
              elseif kind == 'set' then values = redis.call('SMEMBERS', key)
              elseif kind == 'zset' then values = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
              else values = {'unscanned ' .. kind .. ' ' .. key} end
              for _, value in ipairs(values) do out[#out + 1] = value end
            end
            return out
            """
        let port = self.port
        return try await offPool {
            let output = TemporaryDirectory.make() + "/scan"
            FileManager.default.createFile(atPath: output, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
            process.arguments = ["-p", "\(port)", "--raw", "EVAL", script, "0"]
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            process.standardError = FileHandle.nullDevice
            try GatehouseTestSupport.launch(process)
            process.waitUntilExit()
            guard process.terminationStatus == 0, let bytes = FileManager.default.contents(atPath: output) else {
                throw RawHTTPError("redis-cli EVAL failed with status \(process.terminationStatus)")
            }
            return [UInt8](bytes)
        }
    }
}
