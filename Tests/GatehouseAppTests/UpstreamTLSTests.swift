import Foundation
import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// Issue 41: a provider served over HTTPS with a certificate no trust store knows. The
/// gateway has no way to trust an extra CA, and none is set up here: the browser (this test)
/// trusts the certificate, the gateway must not.
@Suite("Upstream TLS", .serialized)
struct UpstreamTLSTests {
    @Test("a token endpoint with an untrusted certificate fails the login for its certificate, and no code is sent")
    func untrustedTokenEndpoint() async throws {
        let openssl = try OpenSSLTool()
        let pem = try openssl.makeSelfSignedCertificate()
        let mock = try await MockProvider.start(tlsCertificate: pem.certificate, key: pem.key)
        defer { mock.stop() }
        var trusting = HTTPClient.Configuration()
        trusting.caBundlePath = pem.certificate
        let browser = try HTTPClient(configuration: trusting)
        defer { browser.shutdown() }

        let definition = """
            {"name": "Mock over HTTPS with a self-signed certificate", "url": "\(mock.secureBaseURL)",
             "oauth2": {"authorize": "/oauth2/authorize", "access_token": "/oauth2/token"}}
            """
        let gateway = try await Gateway.start(workspace: try Workspace(providers: ["mocktls": definition]))
        let base = "http://127.0.0.1:\(gateway.port)"
        let app = try await gateway.send("POST", "/api/admin/apps", body: #"{"name":"shop","domains":["localhost"]}"#)
        let key = try #require(app.json?["key"]?.stringValue)
        let keyset = #"{"parameters":{"client_id":"client-1","client_secret":"secret-1"}}"#
        #expect(try await gateway.send("PUT", "/api/admin/apps/\(key)/keysets/mocktls", body: keyset).status == 200)

        let opts = PercentEncoding.encode(#"{"state":"tls","state_type":"client"}"#)
        let start = try await gateway.client.execute(HTTPClientRequest(
            url: base + "/auth/mocktls?k=\(key)&d=\(PercentEncoding.encode("http://localhost/"))&opts=\(opts)"))
        let authorize = try #require(start.header("location"))
        #expect(authorize.hasPrefix(mock.secureBaseURL + "/oauth2/authorize?"))
        let consent = try await browser.execute(HTTPClientRequest(url: authorize))
        let callback = try #require(consent.header("location"), "the mock answered \(consent.status)")
        #expect(callback.hasPrefix(base + "/auth?code="))

        let page = try await gateway.client.execute(HTTPClientRequest(url: callback))
        let message = try LoginBench.message(page)
        #expect(message["status"] == "error", "\(message)")
        #expect(message["state"] == "tls")
        let expected = "Error during the 'access_token' step (the provider's TLS certificate is not trusted, so nothing was sent)"
        #expect(message["message"] == .string(expected))

        // The gateway did connect and refused the handshake, so not one request, let alone the
        // code and the client secret, reached the token endpoint.
        let stats = try await browser.execute(HTTPClientRequest(url: mock.secureBaseURL + "/_stats"))
        let counts = try #require(stats.json)
        #expect(counts["authorize"] == 1)
        #expect(counts["tls_refused"] == 1, "\(counts)")
        #expect(counts["token"] == 0, "\(counts)")
        _ = try await gateway.stop()
    }
}
