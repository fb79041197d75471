internal import GatehouseCore
internal import HTTPServer

/// `/healthz` says the process answers; `/readyz` says it can do useful work (store reachable);
/// `/metrics` says what happened, for Prometheus.
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
        // Prometheus scrapes each instance directly; a public proxy should not pass this on.
        router.add("GET", "/metrics", .immediate { _ in
            var response = HTTPResponse(status: 200)
            response.headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            response.body = Array(context.metrics.render().utf8)
            return response
        })
    }
}
