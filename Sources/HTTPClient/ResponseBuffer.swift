/// Accumulates one transfer's response on the multi thread and enforces
/// the size limit, so the C callbacks stay one-liners.
struct ResponseBuffer {
    /// Maximum bytes accepted for the body, and separately for all header
    /// lines, of one request.
    let limit: Int
    private(set) var headers: [HTTPHeader] = []
    private(set) var body: [UInt8] = []
    /// Set when a callback refused data because of `limit`; libcurl then
    /// reports CURLE_WRITE_ERROR, which this flag turns into
    /// `.responseTooLarge`.
    private(set) var exceededLimit = false
    private var headerBytes = 0

    private static let statusLinePrefix: [UInt8] = Array("HTTP/".utf8)

    init(limit: Int) {
        self.limit = limit
    }

    /// Appends body bytes; false aborts the transfer.
    mutating func appendBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count <= limit - body.count else {
            exceededLimit = true
            return false
        }
        body.append(contentsOf: bytes)
        return true
    }

    /// Consumes one header line as libcurl delivers it (status lines,
    /// fields, the blank terminator, trailers). Every status line starts a
    /// new response, so only the final response's headers survive interim
    /// 1xx responses and followed redirects. False aborts the transfer.
    mutating func appendHeaderLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
        headerBytes += bytes.count
        guard headerBytes <= limit else {
            exceededLimit = true
            return false
        }
        var line = bytes[...]
        while let last = line.last, last == 0x0A || last == 0x0D {
            line = line.dropLast()
        }
        if line.starts(with: Self.statusLinePrefix) {
            headers.removeAll()
            body.removeAll()
            return true
        }
        guard let first = line.first else { return true }
        if first == 0x20 || first == 0x09 {
            // Obsolete line folding: the line continues the previous value.
            if var previous = headers.popLast() {
                previous.value += " " + Self.decode(Self.trimmed(line))
                headers.append(previous)
            }
            return true
        }
        guard let colon = line.firstIndex(of: 0x3A) else { return true }
        let name = Self.trimmed(line[..<colon])
        let value = Self.trimmed(line[line.index(after: colon)...])
        headers.append(HTTPHeader(name: Self.decode(name), value: Self.decode(value)))
        return true
    }

    /// Moves the collected data into a response without copying the body.
    mutating func takeResponse(status: Int) -> HTTPClientResponse {
        defer {
            headers = []
            body = []
        }
        return HTTPClientResponse(status: status, headers: headers, body: body)
    }

    private static func trimmed(_ bytes: Slice<UnsafeRawBufferPointer>) -> Slice<UnsafeRawBufferPointer> {
        var result = bytes
        while let first = result.first, first == 0x20 || first == 0x09 {
            result = result.dropFirst()
        }
        while let last = result.last, last == 0x20 || last == 0x09 {
            result = result.dropLast()
        }
        return result
    }

    /// Lossy on purpose: a header with invalid UTF-8 (legal obs-text) must
    /// not fail the whole response.
    private static func decode(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
