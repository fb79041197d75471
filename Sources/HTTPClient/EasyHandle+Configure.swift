internal import CCurl

extension EasyHandle {
    /// Methods Gatehouse needs; anything else is refused rather than placed
    /// verbatim on the request line.
    private static let allowedMethods: Set<String> = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]

    /// Methods libcurl must never send twice; see the note on retries in
    /// `configure`.
    private static let nonIdempotentMethods: Set<String> = ["POST", "PATCH"]

    /// Framing headers are computed by libcurl from the body; letting a
    /// caller override them could desynchronise request framing.
    private static let reservedHeaders = ["content-length", "transfer-encoding", "expect"]

    /// The label libcurl gives a body it sends unless told otherwise.
    private static let formType = "application/x-www-form-urlencoded"

    /// Applies every per-request option. Order matters only for the body:
    /// POSTFIELDSIZE must precede COPYPOSTFIELDS.
    func configure(request: HTTPClientRequest, configuration: HTTPClient.Configuration) throws(HTTPClientError) {
        let method = request.method
        guard Self.allowedMethods.contains(method) else {
            throw .invalidRequest("unsupported method \(method)")
        }
        try URLCheck.validate(request.url)

        try set(CURLOPT_URL, request.url)
        // Defence in depth behind URLCheck: libcurl itself refuses every
        // other scheme, including in redirect targets.
        try set(CURLOPT_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        // Without NOSIGNAL libcurl may use SIGALRM for DNS timeouts, which
        // is unsafe in a multi-threaded process.
        try set(CURLOPT_NOSIGNAL, 1)
        // Debian's libcurl resolves names on a helper thread. By default,
        // removing a transfer that is still resolving (timeout, cancel,
        // shutdown) blocks until getaddrinfo returns, which would stall the
        // single multi thread, and so every request, for as long as a
        // broken DNS server takes. QUICK_EXIT makes libcurl detach that
        // helper instead; on POSIX it frees its own memory when getaddrinfo
        // finally returns (lib/asyn-thread.c), so nothing leaks for good.
        try set(CURLOPT_QUICK_EXIT, 1)
        try set(CURLOPT_CONNECTTIMEOUT_MS, configuration.connectTimeout.curlMilliseconds)
        try set(CURLOPT_TIMEOUT_MS, (request.timeout ?? configuration.totalTimeout).curlMilliseconds)

        // TLS verification is deliberately not configurable. CAINFO only
        // replaces the CA *file*; Debian's libcurl also keeps its compiled-in
        // CApath (/etc/ssl/certs), so the extra CA adds trust for tests.
        try set(CURLOPT_SSL_VERIFYPEER, 1)
        try set(CURLOPT_SSL_VERIFYHOST, 2)
        if let caBundlePath = configuration.caBundlePath {
            try set(CURLOPT_CAINFO, caBundlePath)
        }

        try set(CURLOPT_FOLLOWLOCATION, request.followRedirects ? 1 : 0)
        try set(CURLOPT_MAXREDIRS, 5)
        // gzip only, decoded transparently: every provider that compresses
        // speaks it, and libcurl formats this header twice per request, a
        // byte at a time, so the full list ("deflate, gzip, br, zstd") cost
        // more than any provider's answer gains from it.
        try set(CURLOPT_ACCEPT_ENCODING, "gzip")
        // Cheap early rejection: a Content-Length above the limit fails with
        // CURLE_FILESIZE_EXCEEDED before any body byte is read. Bodies
        // without a length are capped by the write callback instead. Not for
        // HEAD: libcurl 7.88 applies the check to the announced length even
        // though no body follows.
        if method != "HEAD" {
            try set(CURLOPT_MAXFILESIZE_LARGE, offset: configuration.maxResponseBytes)
        }

        // Retries: Gatehouse never retries. libcurl, however, has a built-in
        // replay (Curl_retry_request in lib/transfer.c, up to 5 times): when
        // a transfer ran on a *reused* connection and the connection died
        // before a single response byte arrived, libcurl silently resends
        // the request on a fresh connection. That is normally a stale
        // keep-alive connection, but the server may also have received and
        // processed the request before dying. libcurl 7.88 has no option to
        // turn this off (a CURLOPT_FORBID_RETRY_ON_REUSE was only proposed
        // in curl PR #18417, 2025). It does call CURLOPT_PREREQFUNCTION
        // before every send, a replay's included, so a POST or PATCH carries
        // `CurlCallbacks.prerequest`, which refuses a send that follows one
        // no response byte answered: the transfer fails instead of being
        // sent twice. Such requests may then ride pooled connections (a token
        // exchange saves a TCP handshake), and their body goes out in the
        // same packet as the head (COPYPOSTFIELDS). A body handed over through
        // a read callback instead went out in a second send, and a fresh
        // connection for every bodiless POST cost a handshake. Idempotent
        // methods may be replayed by libcurl, which RFC 9110 section 9.2.2
        // permits. (libcurl also replays HTTP/2 streams the server refused
        // with REFUSED_STREAM or GOAWAY, which the protocol guarantees were
        // not processed; a POST or PATCH fails there too.)
        if Self.nonIdempotentMethods.contains(method) {
            try set(CURLOPT_PREREQDATA, pointer: context)
            try setPrerequestCallback(CurlCallbacks.prerequest)
        }

        try configureHeadersAndBody(request, userAgent: configuration.userAgent)

        try setErrorBuffer()
        try set(CURLOPT_PRIVATE, pointer: context)
        try set(CURLOPT_WRITEFUNCTION, callback: CurlCallbacks.body)
        try set(CURLOPT_WRITEDATA, pointer: context)
        try set(CURLOPT_HEADERFUNCTION, callback: CurlCallbacks.header)
        try set(CURLOPT_HEADERDATA, pointer: context)
    }

    private func configureHeadersAndBody(_ request: HTTPClientRequest, userAgent: String) throws(HTTPClientError) {
        let method = request.method
        // Whether libcurl sends the body as POSTFIELDS (below), and so labels it a form
        // unless told otherwise.
        let labelsForm = method != "HEAD" && (request.body != nil || method == "POST" || method == "PUT" || method == "PATCH")
        var hasContentType = false
        var hasUserAgent = false
        for header in request.headers {
            try Self.validate(header)
            if header.hasName("user-agent") { hasUserAgent = true }
            if header.hasName("content-type") { hasContentType = true }
        }
        var lines = HeaderLines()
        for header in request.headers {
            // libcurl copies its own form label in, where a custom header goes through its
            // printf a byte at a time: about a sixth of a token request's printed bytes.
            if labelsForm, header.hasName("content-type"), header.value == Self.formType { continue }
            // libcurl reads "Name:" as "remove this header"; "Name;" is its
            // syntax for sending a header with an empty value.
            try lines.append(header.name, header.value.isEmpty ? ";" : ": ", header.value, to: &headerList)
        }
        // A custom header rather than CURLOPT_USERAGENT, which libcurl prints twice per request
        // (into its own string, then into the request), a byte at a time.
        if !hasUserAgent, !userAgent.isEmpty { try lines.append("User-Agent", ": ", userAgent, to: &headerList) }
        // An empty "Expect:" stops libcurl from sending
        // `Expect: 100-continue` and waiting up to 1s for a reply.
        try lines.append("Expect", ":", "", to: &headerList)

        switch method {
        case "HEAD":
            guard request.body == nil else { throw .invalidRequest("HEAD request with a body") }
            try set(CURLOPT_NOBODY, 1)
        case "GET" where request.body == nil:
            try set(CURLOPT_HTTPGET, 1)
        default:
            let body = request.body ?? []
            if labelsForm {
                // libcurl would otherwise label every body
                // application/x-www-form-urlencoded; send only what the
                // caller chose.
                if !hasContentType { try lines.append("Content-Type", ":", "", to: &headerList) }
                try set(CURLOPT_POSTFIELDSIZE_LARGE, offset: body.count)
                if body.isEmpty {
                    try set(CURLOPT_COPYPOSTFIELDS, "")
                } else {
                    // COPYPOSTFIELDS copies POSTFIELDSIZE bytes during the call,
                    // so the buffer need not outlive it; binary data with NULs
                    // is fine because the size is explicit.
                    let copied = body.withUnsafeBytes { raw in
                        Result { () throws(HTTPClientError) in
                            try set(CURLOPT_COPYPOSTFIELDS, pointer: UnsafeMutableRawPointer(mutating: raw.baseAddress))
                        }
                    }
                    try copied.get()
                }
            }
            if method != "POST" {
                try set(CURLOPT_CUSTOMREQUEST, method)
            }
        }
        try setHeaderList()
    }

    /// Builds each header line in one reused buffer and hands it to libcurl, which copies it:
    /// a string per line cost an allocation for nothing.
    private struct HeaderLines {
        private var buffer: [UInt8] = []

        init() { buffer.reserveCapacity(256) }

        /// Appends `name`, `separator` and `value` as one line to `list`.
        mutating func append(
            _ name: String, _ separator: StaticString, _ value: String, to list: inout UnsafeMutablePointer<curl_slist>?
        ) throws(HTTPClientError) {
            buffer.removeAll(keepingCapacity: true)
            buffer.append(contentsOf: name.utf8)
            separator.withUTF8Buffer { buffer.append(contentsOf: $0) }
            buffer.append(contentsOf: value.utf8)
            buffer.append(0)
            let current = list
            let appended = buffer.withUnsafeBufferPointer { line in
                line.withMemoryRebound(to: CChar.self) { curl_slist_append(current, $0.baseAddress) }
            }
            guard let appended else { throw .transport("curl_slist_append failed") }
            list = appended
        }
    }

    /// Rejects header injection (CR/LF/NUL) and names that are not RFC 9110
    /// tokens; libcurl would send either verbatim.
    private static func validate(_ header: HTTPHeader) throws(HTTPClientError) {
        guard !header.name.isEmpty, header.name.utf8.allSatisfy(isTokenByte) else {
            throw .invalidRequest("invalid header name \(String(reflecting: header.name))")
        }
        guard !header.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) else {
            throw .invalidRequest("header \(header.name) contains CR, LF or NUL")
        }
        if reservedHeaders.contains(where: { header.hasName($0) }) {
            throw .invalidRequest("header \(header.name) is managed by the client")
        }
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
