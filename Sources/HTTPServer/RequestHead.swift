internal import GatehouseCore

/// What a request's head must get right before it is served, checked on what libmicrohttpd
/// has already parsed. libmicrohttpd 0.9.75 frames a body by `Transfer-Encoding` whenever one
/// is present, whatever `Content-Length` says, and checks none of RFC 9112's framing rules: a
/// head that a proxy in front could frame otherwise would let the bytes after it pass for a
/// second request (smuggling). Each check reads fields already collected, and allocates nothing.
enum RequestHead {
    /// The answer to a head whose framing or `Host` is ambiguous (RFC 9112 §3.2, §5.1, §6.1,
    /// §6.3), or nil. It closes the connection: the body's end cannot be trusted, so nothing
    /// after it on the connection may be read as a request.
    /// - Parameters:
    ///   - malformedField: a field name held whitespace or a folded line, or a value a bare CR
    ///     (`headerCollector`).
    ///   - isHTTP10: HTTP/1.0, which may omit `Host`.
    static func refusal(_ headers: HTTPHeaders, malformedField: Bool, isHTTP10: Bool) -> HTTPResponse? {
        if malformedField { return closing("a header name contains whitespace or a folded line, or a value a bare CR") }
        let encodings = headers.occurrences(of: "transfer-encoding")
        let lengths = headers.occurrences(of: "content-length")
        if encodings.count > 0, lengths.count > 0 {
            return closing("the request has both Content-Length and Transfer-Encoding")
        }
        // One field saying exactly `chunked`: libmicrohttpd reads any other coding (or a list)
        // as a body that runs to the end of the connection.
        let chunkedAlone = encodings.count == 1 && (encodings.first ?? "").equalsIgnoringASCIICase("chunked")
        if encodings.count > 0, !chunkedAlone {
            return closing("only the chunked transfer coding is accepted")
        }
        if lengths.count > 1 { return closing("the request has more than one Content-Length") }
        let hosts = headers.occurrences(of: "host").count
        if hosts > 1 || (hosts == 0 && !isHTTP10) { return closing("the request needs exactly one Host header") }
        return nil
    }

    /// False for a path holding an encoded NUL (`%00`), which later C strings (libcurl's URL, a
    /// store key) would silently end at, or a space or control byte, which no valid request
    /// target contains (libmicrohttpd passes a space through unless strict). One pass over the
    /// raw path's bytes.
    static func isCleanPath(_ path: String) -> Bool {
        path.withUTF8InPlace { bytes in
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte <= 0x20 || byte == 0x7F { return false }
                if byte == UInt8(ascii: "%"), index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "0"),
                    bytes[index + 2] == UInt8(ascii: "0")
                {
                    return false
                }
                index += 1
            }
            return true
        }
    }

    private static func closing(_ reason: String) -> HTTPResponse {
        var response = HTTPResponse.error(400, "invalid_request", reason)
        // libmicrohttpd closes the connection after an answer that says so.
        response.headers.add("Connection", "close")
        return response
    }
}
