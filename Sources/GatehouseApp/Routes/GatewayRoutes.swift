internal import HTTPServer

/// Assembles every route the gateway serves.
enum GatewayRoutes {
    static func router(context: GatewayContext) -> Router {
        var router = Router()
        HealthRoutes.register(on: &router, context: context)
        AdminRoutes.register(on: &router, context: context)
        return router
    }
}
