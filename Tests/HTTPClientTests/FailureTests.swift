import Foundation
import GatehouseTestSupport
import HTTPClient
import Testing

@Suite("Failures")
struct FailureTests {
    @Test("Connecting to a closed port fails with connectFailed")
    func connectFailure() async throws {
        let refusing = RefusingPort()
        let client = try makeClient()
        defer { client.shutdown() }

        let error = await capture { () throws(HTTPClientError) in
            try await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(refusing.port)/"))
        }
        #expect(error == .connectFailed)
        #expect(error?.shortDescription == "connectFailed")
        withExtendedLifetime(refusing) {}
    }

    @Test("A server that never answers hits the configured total timeout")
    func totalTimeout() async throws {
        let server = try await MockServer.start()
        let client = try makeClient { $0.totalTimeout = .seconds(1) }
        defer { client.shutdown() }

        let clock = ContinuousClock()
        let start = clock.now
        let error = await capture { () throws(HTTPClientError) in
            try await client.execute(HTTPClientRequest(url: server.baseURL + "/hang"))
        }
        let elapsed = clock.now - start
        #expect(error == .timedOut)
        #expect(elapsed >= .milliseconds(900))
        // Far below any other timeout in play; the slack absorbs a busy 2-core CI machine,
        // where this once took 1.55 s.
        #expect(elapsed < .seconds(5))
    }

    @Test("A per-request timeout overrides the configured one")
    func requestTimeout() async throws {
        let server = try await MockServer.start()
        let client = try makeClient { $0.totalTimeout = .seconds(30) }
        defer { client.shutdown() }

        let clock = ContinuousClock()
        let start = clock.now
        let error = await capture { () throws(HTTPClientError) in
            try await client.execute(HTTPClientRequest(url: server.baseURL + "/hang", timeout: .milliseconds(600)))
        }
        let elapsed = clock.now - start
        #expect(error == .timedOut)
        // The configured 30 s would show; the slack absorbs a busy CI machine.
        #expect(elapsed < .seconds(5))
    }

    @Test("Bodies over maxResponseBytes fail with responseTooLarge", arguments: ["/big/2048", "/stream/65536"])
    func tooLarge(path: String) async throws {
        let server = try await MockServer.start()
        let client = try makeClient { $0.maxResponseBytes = 1024 }
        defer { client.shutdown() }

        let error = await capture { () throws(HTTPClientError) in
            try await client.execute(HTTPClientRequest(url: server.baseURL + path))
        }
        #expect(error == .responseTooLarge)
    }

    @Test("A body of exactly maxResponseBytes is accepted")
    func exactlyAtLimit() async throws {
        let server = try await MockServer.start()
        let client = try makeClient { $0.maxResponseBytes = 1024 }
        defer { client.shutdown() }

        let fixed = try await client.execute(HTTPClientRequest(url: server.baseURL + "/big/1024"))
        #expect(fixed.body.count == 1024)
        let chunked = try await client.execute(HTTPClientRequest(url: server.baseURL + "/stream/1024"))
        #expect(chunked.body.count == 1024)
        // HEAD transfers no body, so a large announced length is fine.
        let head = try await client.execute(HTTPClientRequest(method: "HEAD", url: server.baseURL + "/big/5000"))
        #expect(head.status == 200)
        #expect(head.header("content-length") == "5000")
    }

    @Test("Malformed URLs and non-HTTP schemes are rejected before any I/O", arguments: [
        "not a url", "", "http://", "/relative/path", "127.0.0.1:80/x",
        "file:///etc/passwd", "FILE:///etc/hostname", "ftp://127.0.0.1/", "gopher://127.0.0.1/",
        "dict://127.0.0.1/", "http://exa mple.com/", "http://[::1/", "javascript:alert(1)",
    ])
    func invalidURL(url: String) async throws {
        let client = try makeClient()
        defer { client.shutdown() }

        let error = await capture { () throws(HTTPClientError) in
            try await client.execute(HTTPClientRequest(url: url))
        }
        #expect(error == .invalidURL, "\(url): \(String(describing: error))")
    }

    @Test("A NUL inside the URL is rejected instead of silently truncating it")
    func nulInURL() async throws {
        let client = try makeClient()
        defer { client.shutdown() }

        let error = await capture { () throws(HTTPClientError) in
            try await client.execute(HTTPClientRequest(url: "http://127.0.0.1/\u{0}.evil.example/"))
        }
        #expect(error == .invalidURL)
    }

    @Test("Unsupported methods and injected header lines are rejected")
    func invalidRequests() async throws {
        let client = try makeClient()
        defer { client.shutdown() }
        let url = "http://127.0.0.1:9/"
        let requests = [
            HTTPClientRequest(method: "TRACE", url: url),
            HTTPClientRequest(method: "get", url: url),
            HTTPClientRequest(method: "GET\r\nX: y", url: url),
            HTTPClientRequest(url: url, headers: [HTTPHeader(name: "X-A", value: "v\r\nInjected: 1")]),
            HTTPClientRequest(url: url, headers: [HTTPHeader(name: "Bad Name", value: "v")]),
            HTTPClientRequest(url: url, headers: [HTTPHeader(name: "", value: "v")]),
            HTTPClientRequest(url: url, headers: [HTTPHeader(name: "Content-Length", value: "5")]),
            HTTPClientRequest(method: "HEAD", url: url, body: [1]),
        ]
        for request in requests {
            let error = await capture { () throws(HTTPClientError) in try await client.execute(request) }
            #expect(error == .invalidRequest, "\(request.method) \(request.headers)")
        }
    }

    @Test("Nonsensical configurations are rejected at init")
    func invalidConfiguration() {
        #expect(throws: HTTPClientError.invalidRequest) { try makeClient { $0.maxResponseBytes = 0 } }
        #expect(throws: HTTPClientError.invalidRequest) { try makeClient { $0.totalTimeout = .zero } }
        #expect(throws: HTTPClientError.tlsFailure) { try makeClient { $0.caBundlePath = "/nonexistent/ca.pem" } }
    }

    @Test("Errors compare by kind only and expose a stable short description")
    func errorSemantics() {
        #expect(HTTPClientError.timedOut("after 1s") == .timedOut)
        #expect(HTTPClientError.timedOut("a") != .connectFailed("a"))
        #expect(HTTPClientError.tlsFailure("x").shortDescription == "tlsFailure")
        #expect(HTTPClientError.tlsFailure("x").reason == "x")
        #expect(HTTPClientError.certificateRejected("x").shortDescription == "certificateRejected")
        #expect(HTTPClientError.certificateRejected("x") != .tlsFailure, "a refused certificate is not any TLS failure")
        #expect("\(HTTPClientError.shutdown)" == "shutdown: client shut down")
    }
}
