import Foundation
import HTTPClient
import Testing

@Suite("Requests and responses")
struct RequestResponseTests {
    @Test("GET sends caller headers and returns response headers")
    func getWithHeaders() async throws {
        let server = try await MockServer.start()
        let client = try makeClient()
        defer { client.shutdown() }

        let response = try await client.execute(HTTPClientRequest(
            url: server.baseURL + "/echo?a=1",
            headers: [HTTPHeader(name: "X-Request-Id", value: "abc-123"), HTTPHeader(name: "X-Empty", value: "")]
        ))
        #expect(response.status == 200)
        #expect(response.header("content-type") == "application/json")
        #expect(response.header("X-ECHO-METHOD") == "GET")
        let echo = try Echo(response)
        #expect(echo.method == "GET")
        #expect(echo.query == "a=1")
        #expect(echo.values("x-request-id") == ["abc-123"])
        #expect(echo.values("x-empty") == [""])
        #expect(echo.values("user-agent") == ["Gatehouse"])
        #expect(echo.values("expect").isEmpty)
        #expect(echo.bodyBytes.isEmpty)

        // A caller's own User-Agent replaces the client's.
        let own = try Echo(try await client.execute(HTTPClientRequest(
            url: server.baseURL + "/echo", headers: [HTTPHeader(name: "user-agent", value: "App/1.0")]
        )))
        #expect(own.values("user-agent") == ["App/1.0"])
    }

    @Test("Repeated response headers are kept in order and values are trimmed")
    func responseHeaders() async throws {
        let server = try await MockServer.start()
        let client = try makeClient()
        defer { client.shutdown() }

        let response = try await client.execute(HTTPClientRequest(url: server.baseURL + "/headers"))
        #expect(response.header("x-single") == "one")
        #expect(response.header("x-multi") == "a")
        #expect(response.headers.filter { $0.name.lowercased() == "x-multi" }.map(\.value) == ["a", "b"])
        #expect(response.headers.filter { $0.name == "Set-Cookie" }.count == 2)
        #expect(response.header("missing") == nil)
        #expect(response.text == "ok")
    }

    @Test("POST JSON and form bodies arrive byte-exact without Expect or invented Content-Type")
    func postBodies() async throws {
        let server = try await MockServer.start()
        let client = try makeClient()
        defer { client.shutdown() }

        let json = Array(#"{"grant_type":"authorization_code","code":"äöü\u0000"}"#.utf8)
        let jsonResponse = try await client.execute(HTTPClientRequest(
            method: "POST", url: server.baseURL + "/echo",
            headers: [HTTPHeader(name: "Content-Type", value: "application/json")], body: json
        ))
        let jsonEcho = try Echo(jsonResponse)
        #expect(jsonEcho.method == "POST")
        #expect(jsonEcho.bodyBytes == json)
        #expect(jsonEcho.values("content-type") == ["application/json"])
        #expect(jsonEcho.values("expect").isEmpty)

        let form = Array("grant_type=client_credentials&scope=a%20b&x=%26".utf8)
        let formEcho = try Echo(try await client.execute(HTTPClientRequest(
            method: "POST", url: server.baseURL + "/echo",
            headers: [HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded")], body: form
        )))
        #expect(formEcho.bodyBytes == form)
        #expect(formEcho.values("content-type") == ["application/x-www-form-urlencoded"])

        // The same label on a PUT, and a form label on a DELETE without a body, which libcurl
        // would not label by itself.
        for (method, body) in [("PUT", form), ("DELETE", nil)] as [(String, [UInt8]?)] {
            let echo = try Echo(try await client.execute(HTTPClientRequest(
                method: method, url: server.baseURL + "/echo",
                headers: [HTTPHeader(name: "Content-Type", value: "application/x-www-form-urlencoded")], body: body
            )))
            #expect(echo.method == method)
            #expect(echo.values("content-type") == ["application/x-www-form-urlencoded"], "\(method)")
        }

        // Binary body with NULs and invalid UTF-8; no Content-Type given.
        let binary: [UInt8] = [0, 1, 2, 0xFF, 0xFE, 0, 0x0D, 0x0A, 0x80] + Array(repeating: 7, count: 100_000)
        let binaryEcho = try Echo(try await client.execute(HTTPClientRequest(
            method: "POST", url: server.baseURL + "/echo", body: binary
        )))
        #expect(binaryEcho.bodyBytes == binary)
        #expect(binaryEcho.values("content-type").isEmpty)
        #expect(binaryEcho.values("expect").isEmpty)

        let emptyEcho = try Echo(try await client.execute(HTTPClientRequest(method: "POST", url: server.baseURL + "/echo")))
        #expect(emptyEcho.method == "POST")
        #expect(emptyEcho.values("content-length") == ["0"])
    }

    @Test("PUT, PATCH, DELETE, OPTIONS and HEAD use the requested method", arguments: [
        ("PUT", Array("put-body".utf8) as [UInt8]?),
        ("PATCH", Array(#"{"op":"replace"}"#.utf8) as [UInt8]?),
        ("DELETE", nil),
        ("DELETE", Array("delete-body".utf8) as [UInt8]?),
        ("OPTIONS", nil),
    ])
    func methods(method: String, body: [UInt8]?) async throws {
        let server = try await MockServer.start()
        let client = try makeClient()
        defer { client.shutdown() }

        let response = try await client.execute(HTTPClientRequest(
            method: method, url: server.baseURL + "/echo", body: body
        ))
        #expect(response.status == 200)
        let echo = try Echo(response)
        #expect(echo.method == method)
        #expect(echo.bodyBytes == (body ?? []))
    }

    @Test("a reused libcurl handle carries nothing of the request before it")
    func handleReuse() async throws {
        let server = try await MockServer.start()
        let client = try makeClient()
        defer { client.shutdown() }

        // Sequential requests on one client take the same idle handle back each time.
        let post = try Echo(try await client.execute(HTTPClientRequest(
            method: "POST", url: server.baseURL + "/echo",
            headers: [HTTPHeader(name: "X-Secret", value: "s1"), HTTPHeader(name: "Content-Type", value: "text/plain")],
            body: Array("first".utf8))))
        #expect(post.values("x-secret") == ["s1"])
        let head = try await client.execute(HTTPClientRequest(method: "HEAD", url: server.baseURL + "/echo"))
        #expect(head.header("x-echo-method") == "HEAD")
        let delete = try Echo(try await client.execute(HTTPClientRequest(method: "DELETE", url: server.baseURL + "/echo")))
        #expect(delete.method == "DELETE")
        let get = try Echo(try await client.execute(HTTPClientRequest(url: server.baseURL + "/echo?b=2")))
        #expect(get.method == "GET")
        #expect(get.query == "b=2")
        #expect(get.bodyBytes.isEmpty)
        #expect(get.values("x-secret").isEmpty)
        #expect(get.values("content-type").isEmpty)
        #expect(get.values("user-agent") == ["Gatehouse"])
    }

    @Test("HEAD returns status and headers without a body")
    func head() async throws {
        let server = try await MockServer.start()
        let client = try makeClient()
        defer { client.shutdown() }

        let response = try await client.execute(HTTPClientRequest(method: "HEAD", url: server.baseURL + "/echo"))
        #expect(response.status == 200)
        #expect(response.header("x-echo-method") == "HEAD")
        #expect(response.body.isEmpty)
    }

    @Test("4xx and 5xx are responses, not errors", arguments: [400, 401, 404, 500, 503])
    func statusCodes(code: Int) async throws {
        let server = try await MockServer.start()
        let client = try makeClient()
        defer { client.shutdown() }

        let response = try await client.execute(HTTPClientRequest(url: server.baseURL + "/status/\(code)"))
        #expect(response.status == code)
        #expect(response.text == "status \(code)")
    }

    @Test("gzip is offered, and gzip responses are decoded transparently")
    func gzip() async throws {
        let server = try await MockServer.start()
        let client = try makeClient()
        defer { client.shutdown() }

        let echo = try Echo(try await client.execute(HTTPClientRequest(url: server.baseURL + "/echo")))
        #expect(echo.values("accept-encoding") == ["gzip"])
        let response = try await client.execute(HTTPClientRequest(url: server.baseURL + "/gzip"))
        #expect(response.status == 200)
        #expect(response.text == String(repeating: "hello gzip ", count: 200))
    }

    @Test("Redirects are returned as-is by default and followed only on request")
    func redirects() async throws {
        let server = try await MockServer.start()
        let client = try makeClient()
        defer { client.shutdown() }

        let unfollowed = try await client.execute(HTTPClientRequest(url: server.baseURL + "/redirect"))
        #expect(unfollowed.status == 302)
        #expect(unfollowed.header("location") == "/echo?redirected=1")

        let followed = try await client.execute(HTTPClientRequest(url: server.baseURL + "/redirect", followRedirects: true))
        #expect(followed.status == 200)
        #expect(followed.header("location") == nil)  // headers of the final response only
        #expect(try Echo(followed).query == "redirected=1")

        // A POST's guard against libcurl's silent replay lets a redirect through: a response
        // came first.
        let posted = try await client.execute(
            HTTPClientRequest(method: "POST", url: server.baseURL + "/redirect", body: Array("a=1".utf8), followRedirects: true))
        #expect(posted.status == 200)
        #expect(try Echo(posted).query == "redirected=1")
    }
}
