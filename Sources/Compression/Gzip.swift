internal import CZlib

/// Why bytes could not be compressed or decompressed.
public struct CompressionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Details for the operator's log.
    public let reason: String

    public var description: String { "compression: \(reason)" }
}

/// gzip (RFC 1952) through zlib, for vendor envelopes such as Emay's (gzip, then AES).
public enum Gzip {
    /// The two bytes every gzip member starts with.
    public static let magic: [UInt8] = [0x1F, 0x8B]

    /// True when `bytes` start like a gzip member.
    public static func isGzip(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 2 && bytes[0] == magic[0] && bytes[1] == magic[1]
    }

    /// `bytes` as one gzip member.
    public static func compress(_ bytes: [UInt8]) throws(CompressionError) -> [UInt8] {
        var stream = z_stream()
        guard gh_deflate_init_gzip(&stream) == Z_OK else { throw CompressionError(reason: "deflateInit2 failed") }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, UInt(bytes.count)))
        var output = [UInt8](repeating: 0, count: bound)
        var input = bytes
        let status: Int32 = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_in = inBuffer.baseAddress
                stream.avail_in = UInt32(inBuffer.count)
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = UInt32(outBuffer.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw CompressionError(reason: "deflate did not finish (\(status))") }
        output.removeLast(output.count - Int(stream.total_out))
        return output
    }

    /// The content of a gzip member, refusing more than `limit` bytes of output so a small
    /// hostile body cannot inflate into gigabytes.
    public static func decompress(_ bytes: [UInt8], limit: Int = 1 << 20) throws(CompressionError) -> [UInt8] {
        var stream = z_stream()
        guard gh_inflate_init_gzip(&stream) == Z_OK else { throw CompressionError(reason: "inflateInit2 failed") }
        defer { inflateEnd(&stream) }
        var input = bytes
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var status: Int32 = Z_OK
        try input.withUnsafeMutableBufferPointer { (inBuffer) throws(CompressionError) in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = UInt32(inBuffer.count)
            while status == Z_OK {
                let produced: Int = chunk.withUnsafeMutableBufferPointer { outBuffer in
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = UInt32(outBuffer.count)
                    status = inflate(&stream, Z_NO_FLUSH)
                    return outBuffer.count - Int(stream.avail_out)
                }
                output += chunk[0..<produced]
                guard output.count <= limit else { throw CompressionError(reason: "more than \(limit) bytes after decompression") }
                if status == Z_BUF_ERROR, stream.avail_in == 0 { break }
            }
        }
        guard status == Z_STREAM_END else { throw CompressionError(reason: "not a complete gzip stream (\(status))") }
        return output
    }
}
