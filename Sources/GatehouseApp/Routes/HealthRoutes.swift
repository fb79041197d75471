internal import GatehouseCore
internal import HTTPServer

/// `/healthz` says the process answers; `/readyz` says it can do useful work (store reachable).
enum HealthRoutes {
    private static let alive = HTTPResponse.jsonBytes(Array(#"{"status":"ok"}"#.utf8))

    static func register(on router: inout Router, context: GatewayContext) {
        // Answered on the server thread: the check must stay cheap enough to poll hard.
        router.add("GET", "/healthz", .immediate { _ in alive })
        router.add(
            "GET", "/readyz",
            .deferred { request in
                do throws(StoreError) {
                    try await context.store.ping()
                    return .jsonBytes(Array(#"{"status":"ready"}"#.utf8))
                } catch {
                    context.logger.warning("Store not ready", ["request.id": request.requestID, "error": error.description])
                    return .error(503, "store_unavailable", "the store is unreachable")
                }
            })
    }
}
