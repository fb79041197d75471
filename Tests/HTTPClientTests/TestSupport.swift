import Foundation
import HTTPClient

/// The JSON the mock server's /echo route returns.
struct Echo: Decodable {
    var method: String
    var path: String
    var query: String
    var headers: [[String]]
    var body: String

    var bodyBytes: [UInt8] {
        [UInt8](Data(base64Encoded: body) ?? Data())
    }

    /// All values the server received for a header, case-insensitively.
    func values(_ name: String) -> [String] {
        headers.compactMap { pair in
            guard pair.count == 2, pair[0].lowercased() == name.lowercased() else { return nil }
            return pair[1]
        }
    }

    init(_ response: HTTPClientResponse) throws {
        self = try JSONDecoder().decode(Echo.self, from: Data(response.body))
    }
}

extension HTTPClientResponse {
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// Runs `body` and returns the HTTPClientError it threw, or nil on success.
func capture(
    _ body: () async throws(HTTPClientError) -> HTTPClientResponse
) async -> HTTPClientError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// A client with short limits so failure tests finish quickly.
func makeClient(_ adjust: (inout HTTPClient.Configuration) -> Void = { _ in }) throws -> HTTPClient {
    var configuration = HTTPClient.Configuration()
    configuration.connectTimeout = .seconds(2)
    configuration.totalTimeout = .seconds(5)
    adjust(&configuration)
    return try HTTPClient(configuration: configuration)
}
