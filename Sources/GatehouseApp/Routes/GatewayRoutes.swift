internal import HTTPClient
internal import HTTPServer

/// Assembles every route the gateway serves.
enum GatewayRoutes {
    static func router(context: GatewayContext, outbound: HTTPClient) -> Router {
        var router = Router()
        HealthRoutes.register(on: &router, context: context)
        AdminRoutes.register(on: &router, context: context)
        ProviderRoutes.register(on: &router, providers: context.providers)
        let verifier = IDTokenVerifier(outbound: outbound, metrics: context.metrics, store: context.store)
        let login = LoginService(context: context, outbound: outbound, verifier: verifier, apple: AppleSignIn(keys: verifier.cache))
        // Registered before the login routes, so `/auth/:provider/me` is not read as a start.
        ProviderAPIRoutes.register(on: &router, api: ProviderAPI(login: login))
        AuthRoutes.register(on: &router, login: login)
        return router
    }
}
