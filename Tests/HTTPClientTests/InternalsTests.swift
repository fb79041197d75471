@testable import HTTPClient
import Testing

@Suite("Internals")
struct InternalsTests {
    private func feed(_ buffer: inout ResponseBuffer, _ line: String) -> Bool {
        Array(line.utf8).withUnsafeBytes { buffer.appendHeaderLine($0) }
    }

    @Test("Only the final response's headers survive interim and redirect responses")
    func headerParsing() {
        var buffer = ResponseBuffer(limit: 1024)
        #expect(feed(&buffer, "HTTP/1.1 100 Continue\r\n"))
        #expect(feed(&buffer, "\r\n"))
        #expect(feed(&buffer, "HTTP/1.1 302 Found\r\n"))
        #expect(feed(&buffer, "Location: /next\r\n"))
        #expect(feed(&buffer, "HTTP/2 200 \r\n"))
        #expect(feed(&buffer, "content-type:\tapplication/json \r\n"))
        #expect(feed(&buffer, "X-Folded: first\r\n"))
        #expect(feed(&buffer, "   second\r\n"))
        #expect(feed(&buffer, "X-Empty:\r\n"))
        #expect(feed(&buffer, "garbage without colon\r\n"))
        #expect(feed(&buffer, "\r\n"))
        let response = buffer.takeResponse(status: 200)
        #expect(response.headers == [
            HTTPHeader(name: "content-type", value: "application/json"),
            HTTPHeader(name: "X-Folded", value: "first second"),
            HTTPHeader(name: "X-Empty", value: ""),
        ])
        #expect(response.header("Location") == nil)
    }

    @Test("Header and body bytes are each capped at the limit")
    func limits() {
        var buffer = ResponseBuffer(limit: 8)
        let ok = [UInt8](repeating: 1, count: 8).withUnsafeBytes { buffer.appendBody($0) }
        #expect(ok)
        let over = [UInt8](repeating: 1, count: 1).withUnsafeBytes { buffer.appendBody($0) }
        #expect(!over)
        #expect(buffer.exceededLimit)

        var headers = ResponseBuffer(limit: 8)
        #expect(!feed(&headers, "X-Long: 0123456789\r\n"))
        #expect(headers.exceededLimit)
    }

    @Test("Durations become libcurl milliseconds, rounded up and never 0")
    func milliseconds() {
        #expect(Duration.seconds(10).curlMilliseconds == 10_000)
        #expect(Duration.microseconds(1500).curlMilliseconds == 2)
        #expect(Duration.nanoseconds(1).curlMilliseconds == 1)
        #expect(Duration.zero.curlMilliseconds == 1)
        #expect(Duration.seconds(-5).curlMilliseconds == 1)
        #expect(Duration.seconds(Int64.max).curlMilliseconds == Int(Int32.max))
    }

    @Test("A remembered URL still passes, a bad one never does, and the set empties when full")
    func rememberedURLs() throws {
        let token = "http://127.0.0.1:9/oauth2/token"
        for _ in 0..<3 { try URLCheck.validate(token) }
        for bad in ["file:///etc/passwd", "http://", "gopher://127.0.0.1/"] {
            for _ in 0..<2 { #expect(throws: HTTPClientError.self) { try URLCheck.validate(bad) } }
        }
        // Past the set's size, and with long URLs that are never kept: every one still passes.
        for index in 0..<600 { try URLCheck.validate("http://127.0.0.1:9/\(index)") }
        try URLCheck.validate("http://127.0.0.1:9/" + String(repeating: "a", count: 300))
        try URLCheck.validate(token)
        #expect(throws: HTTPClientError.self) { try URLCheck.validate("ftp://127.0.0.1/") }
    }
}
