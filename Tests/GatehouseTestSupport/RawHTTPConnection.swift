#if canImport(Glibc)
import Glibc
#endif

/// A parsed HTTP/1.1 response, as a test reads it.
public struct RawResponse: Sendable {
    public let status: Int
    public let headers: [(String, String)]
    public let body: [UInt8]

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// A blocking TCP connection to a local server that writes raw bytes and reads raw
/// responses: for keep-alive checks and for sending requests no real client would send.
/// Every read has a timeout, so a misbehaving server fails the test instead of hanging it.
public final class RawHTTPConnection {
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    public init(port: UInt16, timeoutMilliseconds: Int = 10_000) throws {
        // Connected before `descriptor` is set: once every stored property is, a throw runs
        // deinit, whose close would then be a second one. Between the two, another thread
        // may have been given the same number, and its socket or file would be closed under
        // it (that was the suite's rare "connection refused", "closed unanswered" and lost
        // child output).
        let connected = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard connected >= 0 else { throw RawHTTPError("socket failed: \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: (timeoutMilliseconds % 1000) * 1000)
        setsockopt(connected, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(connected, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(connected, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            let reason = String(cString: strerror(errno))
            close(connected)
            throw RawHTTPError("connect to port \(port) failed: \(reason)")
        }
        descriptor = connected
    }

    deinit { close(descriptor) }

    /// Writes bytes; returns false if the peer has gone.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress.map { $0 + offset }, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    @discardableResult
    public func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Half-closes the write side, as a client that stops mid-request would.
    public func finishWriting() { shutdown(descriptor, Int32(SHUT_WR)) }

    /// Reads one response (Content-Length or chunked body; HEAD-style empty bodies when asked).
    public func readResponse(expectBody: Bool = true) throws -> RawResponse {
        let headerEnd = try readUntil([13, 10, 13, 10])
        let head = String(decoding: buffer[0..<headerEnd], as: UTF8.self)
        buffer.removeFirst(headerEnd + 4)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        guard !lines.isEmpty else { throw RawHTTPError("empty response") }
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw RawHTTPError("bad status line") }
        let headers: [(String, String)] = lines.compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters())
        }
        if status == 100 { return try readResponse(expectBody: expectBody) }
        let lookup = { (name: String) in headers.first { $0.0.lowercased() == name }?.1 }
        var body: [UInt8] = []
        if !expectBody {
            body = []
        } else if let length = lookup("content-length").flatMap({ Int($0) }) {
            try fill(length)
            body = Array(buffer[0..<length])
            buffer.removeFirst(length)
        } else if lookup("transfer-encoding")?.lowercased() == "chunked" {
            while true {
                let lineEnd = try readUntil([13, 10])
                let sizeText = String(decoding: buffer[0..<lineEnd], as: UTF8.self)
                buffer.removeFirst(lineEnd + 2)
                guard let size = Int(sizeText.split(separator: ";")[0], radix: 16) else { throw RawHTTPError("bad chunk") }
                try fill(size + 2)
                body += buffer[0..<size]
                buffer.removeFirst(size + 2)
                if size == 0 { break }
            }
        }
        return RawResponse(status: status, headers: headers, body: body)
    }

    /// True once the server has closed the connection (read returns 0 or an error).
    public func isClosedByPeer() -> Bool {
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, 0) <= 0
    }

    /// Everything the server still sends, and whether it then closed the connection (a reset
    /// counts as closed). Unlike `isClosedByPeer`, a server that keeps the connection open
    /// until the read timeout is not taken for one that closed it.
    public func readUntilClosed() -> (bytes: [UInt8], closed: Bool) {
        var chunk = [UInt8](repeating: 0, count: 65536)
        var closed = false
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 || (count < 0 && errno == ECONNRESET) { closed = true }
            guard count > 0 else { break }
            buffer += chunk[0..<count]
        }
        defer { buffer = [] }
        return (buffer, closed)
    }

    private func readMore() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw RawHTTPError("connection closed or timed out") }
        buffer += chunk[0..<count]
    }

    private func fill(_ count: Int) throws {
        while buffer.count < count { try readMore() }
    }

    private func readUntil(_ marker: [UInt8]) throws -> Int {
        var searchFrom = 0
        while true {
            if buffer.count >= marker.count {
                for index in searchFrom...(buffer.count - marker.count) where Array(buffer[index..<(index + marker.count)]) == marker {
                    return index
                }
                searchFrom = max(0, buffer.count - marker.count + 1)
            }
            try readMore()
        }
    }
}

public struct RawHTTPError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension String {
    func trimmingCharacters() -> String {
        var slice = Substring(self)
        while slice.first == " " || slice.first == "\t" { slice = slice.dropFirst() }
        while slice.last == " " || slice.last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}

/// One request on a fresh connection.
public func rawRequest(port: UInt16, _ text: String, expectBody: Bool = true) throws -> RawResponse {
    let connection = try RawHTTPConnection(port: port)
    connection.send(text)
    return try connection.readResponse(expectBody: expectBody)
}

import Foundation

/// Runs blocking socket work on a thread of its own. Blocking a cooperative-pool thread in a
/// test would starve the very server tasks the test is waiting for (two threads on two
/// cores), and dispatch's global pool is too narrow for dozens of concurrent clients.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try work() })
        }
    }
}

/// One request on a fresh connection, without blocking the caller's thread.
public func request(port: UInt16, _ text: String, expectBody: Bool = true) async throws -> RawResponse {
    try await offPool { try rawRequest(port: port, text, expectBody: expectBody) }
}
