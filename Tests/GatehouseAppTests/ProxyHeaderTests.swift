import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import HTTPServer
import Testing

/// A provider API that answers with a page of markup: what a `/request` caller could make the
/// gateway serve from its own origin. Run in process on the server module, since no mock
/// provider answers with HTML.
private struct MarkupUpstream {
    let server: HTTPServer
    static let page = "<!DOCTYPE html><html><body><script>parent.postMessage(document.cookie, '*')</script></body>"

    static func start() throws -> MarkupUpstream {
        var router = Router()
        router.add("GET", "/api/page", .immediate { _ in
            let headers = HTTPHeaders([
                ("Content-Type", "text/html; charset=utf-8"), ("Content-Security-Policy", "default-src *"),
            ])
            return HTTPResponse(status: 200, headers: headers, body: Array(page.utf8))
        })
        let address = ListenAddress(host: "127.0.0.1", port: 0, family: .ipv4)
        let configuration = HTTPServer.Configuration(address: address, threads: 1)
        return MarkupUpstream(server: try HTTPServer(configuration: configuration, router: router, logger: .silent()))
    }

    var base: String { "http://127.0.0.1:\(server.port)" }

    static func definition(base: String) -> String {
        """
        {"name": "Markup API", "url": "\(base)",
         "oauth2": {"authorize": "/authorize", "access_token": "/token", "request": "\(base)/api"}}
        """
    }
}

@Suite("Request proxy: answers are confined in the gateway's origin", .serialized)
struct ProxyHeaderTests {
    static let origin = "http://localhost"

    @Test("an upstream HTML answer is relayed with nosniff and a sandbox policy, CORS kept; so are the route's errors")
    func confinedAnswers() async throws {
        let upstream = try MarkupUpstream.start()
        let workspace = try Workspace(providers: ["markup": MarkupUpstream.definition(base: upstream.base)])
        let gateway = try await Gateway.start(workspace: workspace)
        let app = #"{"name":"markup","domains":["localhost"]}"#
        let created = try await gateway.send("POST", "/api/admin/apps", body: app)
        let key = try #require(created.json?["key"]?.stringValue)
        let parameters = #"{"parameters":{"client_id":"c","client_secret":"s"}}"#
        let keyset = try await gateway.send("PUT", "/api/admin/apps/\(key)/keysets/markup", body: parameters)
        #expect(keyset.status == 200)

        let oauthio = "k=\(key)&access_token=t1"
        func call(_ path: String) async throws -> HTTPClientResponse {
            let headers = [HTTPHeader(name: "oauthio", value: oauthio), HTTPHeader(name: "Origin", value: Self.origin)]
            return try await gateway.client.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(gateway.port)" + path, headers: headers))
        }
        func expectConfined(_ answer: HTTPClientResponse, _ what: String) {
            #expect(answer.header("x-content-type-options") == "nosniff", "\(what)")
            #expect(answer.header("content-security-policy") == "sandbox", "\(what)")
            #expect(answer.header("access-control-allow-origin") == Self.origin, "\(what)")
            #expect(answer.header("vary") == "Origin", "\(what)")
        }

        let page = try await call("/request/markup/%2Fpage")
        #expect(page.status == 200)
        #expect(page.header("content-type") == "text/html; charset=utf-8", "the provider's type is relayed")
        #expect(String(decoding: page.body, as: UTF8.self) == MarkupUpstream.page)
        expectConfined(page, "the relayed page")
        let policies = page.headers.filter { $0.hasName("content-security-policy") }
        #expect(policies.count == 1, "the provider's own policy is replaced")

        let climbing = try await call("/request/markup/%2F..%3B%2Fadmin")
        #expect(climbing.status == 400)
        expectConfined(climbing, "a refused URL")
        let unknown = try await call("/request/nosuch/%2Fpage")
        #expect(unknown.status == 404)
        expectConfined(unknown, "an unknown provider")

        // A NUL in the path never reaches the route: the server refuses it first.
        for target in ["/request/markup/%2Fpage%00.json", "/healthz%00x"] {
            let head = "GET \(target) HTTP/1.1\r\nHost: x\r\noauthio: \(oauthio)\r\n\r\n"
            let refused = try await request(port: gateway.port, head)
            #expect(refused.status == 400, "\(target)")
            let error = (try? JSONCoding.decode(JSONValue.self, from: refused.body))?["error"]
            #expect(error == "invalid_request", "\(target)")
        }
        #expect(try await gateway.stop() == 0)
        await upstream.server.shutdown(drainTimeout: .seconds(1))
    }
}
