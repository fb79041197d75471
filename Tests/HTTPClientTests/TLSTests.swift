import Foundation
import HTTPClient
import Testing

@Suite("TLS")
struct TLSTests {
    @Test("A self-signed server fails verification unless its CA is configured")
    func selfSigned() async throws {
        let certificate = try await SelfSignedCertificate.make()
        defer { certificate.remove() }
        let server = try await MockServer.start(certificate: certificate.certificatePath, key: certificate.keyPath)
        let url = server.baseURL + "/echo"

        let strict = try makeClient()
        defer { strict.shutdown() }
        let error = await capture { () throws(HTTPClientError) in
            try await strict.execute(HTTPClientRequest(url: url))
        }
        #expect(error == .tlsFailure, "\(String(describing: error))")

        let trusting = try makeClient { $0.caBundlePath = certificate.certificatePath }
        defer { trusting.shutdown() }
        let response = try await trusting.execute(HTTPClientRequest(method: "POST", url: url, body: Array("tls".utf8)))
        #expect(response.status == 200)
        #expect(try Echo(response).bodyBytes == Array("tls".utf8))
    }

    @Test("A trusted CA does not disable host name verification")
    func hostNameStillVerified() async throws {
        let certificate = try await SelfSignedCertificate.make(subjectAltName: "DNS:wrong.example")
        defer { certificate.remove() }
        let server = try await MockServer.start(certificate: certificate.certificatePath, key: certificate.keyPath)
        let client = try makeClient { $0.caBundlePath = certificate.certificatePath }
        defer { client.shutdown() }

        let error = await capture { () throws(HTTPClientError) in
            try await client.execute(HTTPClientRequest(url: server.baseURL + "/echo"))
        }
        #expect(error == .tlsFailure, "\(String(describing: error))")
    }
}
