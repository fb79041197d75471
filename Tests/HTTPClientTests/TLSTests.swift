import Foundation
import HTTPClient
import Testing

@Suite("TLS")
struct TLSTests {
    /// A handshake with the Python mock can take seconds while the rest of the suite loads
    /// both cores; the 2 s connect limit of `makeClient` then turned a verification test into
    /// a timeout now and then. A refused certificate still fails at once.
    static func patient(_ configuration: inout HTTPClient.Configuration) {
        configuration.connectTimeout = .seconds(15)
        configuration.totalTimeout = .seconds(30)
    }

    @Test("A self-signed server fails verification, as a rejected certificate, unless its CA is configured")
    func selfSigned() async throws {
        let certificate = try await SelfSignedCertificate.make()
        defer { certificate.remove() }
        let server = try await MockServer.start(certificate: certificate.certificatePath, key: certificate.keyPath)
        let url = server.baseURL + "/echo"

        let strict = try makeClient(Self.patient)
        defer { strict.shutdown() }
        let error = await capture { () throws(HTTPClientError) in
            try await strict.execute(HTTPClientRequest(url: url))
        }
        #expect(error == .certificateRejected, "\(String(describing: error))")
        #expect(error?.shortDescription == "certificateRejected")

        let trusting = try makeClient {
            Self.patient(&$0)
            $0.caBundlePath = certificate.certificatePath
        }
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
        let client = try makeClient {
            Self.patient(&$0)
            $0.caBundlePath = certificate.certificatePath
        }
        defer { client.shutdown() }

        let error = await capture { () throws(HTTPClientError) in
            try await client.execute(HTTPClientRequest(url: server.baseURL + "/echo"))
        }
        #expect(error == .certificateRejected, "\(String(describing: error))")
    }
}
