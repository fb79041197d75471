import GatehouseCore
import GatehouseTestSupport
import HTTPClient

/// A running gateway and a client pointed at it.
struct Gateway {
    static let adminToken = "test-admin-token-0123456789"

    let process: GatehouseProcess
    let port: UInt16
    let client: HTTPClient
    let workspace: Workspace

    static func start(
        workspace: Workspace? = nil, store: String = "memory:", adminToken: String? = Gateway.adminToken,
        extra: [String] = []
    ) async throws -> Gateway {
        let workspace = try workspace ?? Workspace()
        // The public URL must name the real port, since providers send the browser back to it.
        let chosen = freePort()
        var arguments = [
            "serve", "--listen", "127.0.0.1:\(chosen)", "--public-url", "http://127.0.0.1:\(chosen)", "--store", store,
            "--providers", workspace.providers, "--log-format", "json",
        ]
        if let adminToken { arguments += ["--admin-token", adminToken] }
        let process = try GatehouseProcess(arguments + extra, directory: workspace.path)
        let port = try await process.port()
        return Gateway(process: process, port: port, client: try HTTPClient(), workspace: workspace)
    }

    func send(_ method: String, _ path: String, body: String? = nil, token: String? = Gateway.adminToken) async throws -> HTTPClientResponse {
        var headers: [HTTPHeader] = []
        if let token { headers.append(HTTPHeader(name: "Authorization", value: "Bearer \(token)")) }
        if body != nil { headers.append(HTTPHeader(name: "Content-Type", value: "application/json")) }
        return try await client.execute(
            HTTPClientRequest(method: method, url: "http://127.0.0.1:\(port)\(path)", headers: headers, body: body.map { Array($0.utf8) }))
    }

    func stop() async throws -> Int32 {
        client.shutdown()
        return try await process.stop()
    }
}

extension HTTPClientResponse {
    var json: JSONValue? { try? JSONCoding.decode(JSONValue.self, from: body) }
}
