import GatehouseCore
import GatehouseTestSupport
import HTTPClient
import Testing

/// The stores the integration suite runs against: the embedded one and the shared one.
enum TestStore: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, redis

    var testDescription: String { rawValue }

    /// The `--store` value: a file in the workspace, or the test Redis.
    func location() async throws -> String {
        switch self {
        case .sqlite: "sqlite:./data/gatehouse.db"
        case .redis: try await RedisServer.sharedURL()
        }
    }
}

/// A running gateway and a client pointed at it.
struct Gateway {
    static let adminToken = "test-admin-token-0123456789"
    /// Every Redis-backed gateway of a test shares this key, as instances of one deployment do.
    static let masterKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

    let process: GatehouseProcess
    let port: UInt16
    let client: HTTPClient
    let workspace: Workspace

    static func start(
        workspace: Workspace? = nil, store: String = "memory:", adminToken: String? = Gateway.adminToken,
        extra: [String] = [], publicURL: String? = nil
    ) async throws -> Gateway {
        let workspace = try workspace ?? Workspace()
        var attempt = 1
        while true {
            // The public URL must name the real port, since providers send the browser back to
            // it (or the proxy's, when the gateway sits behind one). So the port is chosen here,
            // and something running alongside may take it before the gateway binds it.
            let chosen = freePort()
            var arguments = [
                "serve", "--listen", "127.0.0.1:\(chosen)", "--public-url", publicURL ?? "http://127.0.0.1:\(chosen)", "--store",
                store, "--providers", workspace.providers, "--builtin-providers", "off", "--log-format", "json",
            ]
            if let adminToken { arguments += ["--admin-token", adminToken] }
            // Every test signs in from 127.0.0.1, and gateways on the shared Redis share its
            // buckets: limits are off unless a test sets them (`extra` comes later and wins).
            arguments += ["--rate-limit-app", "off", "--rate-limit-address", "off"]
            // Redis has no data directory for a master.key file: the key must be given.
            if store.hasPrefix("redis://"), !extra.contains("--master-key") { arguments += ["--master-key", masterKey] }
            let process = try GatehouseProcess(arguments + extra, directory: workspace.path)
            do {
                let port = try await process.port()
                return Gateway(process: process, port: port, client: try HTTPClient(), workspace: workspace)
            } catch where attempt < 3 && process.standardError.contains("Address already in use") {
                _ = try? await process.waitForExit(timeout: .seconds(5))
                attempt += 1
            }
        }
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
