internal import GatehouseCore
internal import GatehouseCrypto
internal import HTTPServer

/// The admin API of interface.md §3, behind `Authorization: Bearer <admin token>`. With no
/// token configured the routes do not exist at all (404), so a forgotten setting cannot
/// leave an open door.
enum AdminRoutes {
    static func register(on router: inout Router, context: GatewayContext) {
        guard let token = context.configuration.adminToken else { return }
        let expected = Array(token.utf8)
        func route(_ method: String, _ pattern: String, _ body: @escaping @Sendable (HTTPRequest) async throws(HTTPFailure) -> HTTPResponse) {
            router.add(
                method, pattern,
                .deferred { request in
                    guard authorized(request, expected: expected) else {
                        var response = HTTPResponse.error(401, "unauthorized", "a valid admin bearer token is required")
                        response.headers.set("WWW-Authenticate", #"Bearer realm="gatehouse-admin""#)
                        return response
                    }
                    do throws(HTTPFailure) {
                        return try await body(request)
                    } catch {
                        if error.status >= 500 {
                            context.logger.error("Admin request failed", ["request.id": request.requestID, "error": error.description])
                        }
                        return error.response
                    }
                })
        }
        let registry = context.registry

        route("POST", "/api/admin/apps") { request throws(HTTPFailure) in
            let body = try JSONObjectBody(request, allowedKeys: ["name", "domains"])
            let name = try body.string("name", required: true) ?? ""
            let domains = try body.strings("domains") ?? []
            let app = try await call { () throws(RegistryError) in try await registry.createApp(name: name, domains: domains) }
            context.logger.notice("App created", ["app.key": app.key, "request.id": request.requestID])
            return .json(AppView(app, includeSecret: true), status: 201)
        }
        route("GET", "/api/admin/apps") { _ throws(HTTPFailure) in
            let apps = try await call { () throws(RegistryError) in try await registry.apps() }
            return .json(apps.map { AppView($0, includeSecret: false) })
        }
        route("GET", "/api/admin/apps/:key") { request throws(HTTPFailure) in
            let key = request.parameter("key")
            let (app, keysets) = try await call { () throws(RegistryError) in
                (try await registry.app(key: key), try await registry.keysets(appKey: key))
            }
            return .json(AppView(app, includeSecret: true, keysets: keysets))
        }
        route("PATCH", "/api/admin/apps/:key") { request throws(HTTPFailure) in
            let body = try JSONObjectBody(request, allowedKeys: ["name", "domains", "rotate_secret"])
            let name = try body.string("name")
            let domains = try body.strings("domains")
            let rotate = try body.bool("rotate_secret") ?? false
            let key = request.parameter("key")
            let app = try await call { () throws(RegistryError) in
                try await registry.updateApp(key: key, name: name, domains: domains, rotateSecret: rotate)
            }
            if rotate { context.logger.notice("App secret rotated", ["app.key": key, "request.id": request.requestID]) }
            return .json(AppView(app, includeSecret: true))
        }
        route("DELETE", "/api/admin/apps/:key") { request throws(HTTPFailure) in
            let key = request.parameter("key")
            try await call { () throws(RegistryError) in try await registry.deleteApp(key: key) }
            context.logger.notice("App deleted", ["app.key": key, "request.id": request.requestID])
            return .empty(204)
        }
        route("PUT", "/api/admin/apps/:key/keysets/:provider") { request throws(HTTPFailure) in
            let body = try JSONObjectBody(request, allowedKeys: ["parameters", "response_type", "device_sign_in"])
            let deviceSignIn = try body.bool("device_sign_in") ?? true
            let parameters = try body.object("parameters") ?? [:]
            let typeText = try body.string("response_type") ?? ResponseType.both.rawValue
            guard let type = ResponseType(rawValue: typeText) else {
                throw HTTPFailure(400, "invalid_request", "'response_type' must be token, code or both")
            }
            let key = request.parameter("key")
            let provider = request.parameter("provider")
            let keyset = try await call { () throws(RegistryError) in
                _ = try await registry.app(key: key)
                return try await registry.setKeyset(
                    appKey: key, provider: provider, parameters: parameters, responseType: type, deviceSignIn: deviceSignIn)
            }
            return .json(KeysetView(keyset))
        }
        route("DELETE", "/api/admin/apps/:key/keysets/:provider") { request throws(HTTPFailure) in
            let key = request.parameter("key")
            let provider = request.parameter("provider")
            try await call { () throws(RegistryError) in try await registry.deleteKeyset(appKey: key, provider: provider) }
            return .empty(204)
        }
    }

    private static func authorized(_ request: HTTPRequest, expected: [UInt8]) -> Bool {
        guard let header = request.headers["authorization"] else { return false }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        return ConstantTime.equals(Array(parts[1].utf8), expected)
    }

    /// Runs registry work, turning its errors into HTTP failures.
    private static func call<T>(_ work: () async throws(RegistryError) -> T) async throws(HTTPFailure) -> T {
        do { return try await work() } catch { throw HTTPFailure(error) }
    }
}
