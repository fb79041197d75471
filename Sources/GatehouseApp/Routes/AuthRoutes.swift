internal import GatehouseCore
internal import HTTPServer

/// OAuth.io's login routes (interface.md §2).
enum AuthRoutes {
    static func register(on router: inout Router, login: LoginService) {
        router.add("GET", "/auth/iframe", .immediate { request in
            ResultDelivery.iframeRelay(origin: request.queryValue("d").flatMap { WebURL($0, assumeHTTP: true) })
        })
        router.add("POST", "/auth/access_token", .deferred { await login.redeem($0) })
        router.add("POST", "/auth/refresh_token/:provider", .deferred { await login.refresh($0) })
        router.add("POST", "/auth/apple/notifications", .deferred { await login.appleNotification($0) })
        router.add("POST", "/auth/:provider/native", .deferred { await login.native($0) })
        router.add("POST", "/auth/revoke/:provider", .deferred { await login.revoke($0) })
        router.add("GET", "/auth/:provider/jwks", .deferred { await login.publicKeys($0) })
        router.add("GET", "/auth/:provider", .deferred { await login.start($0) })
        router.add("GET", "/auth", .deferred { await login.callback($0) })
        router.add("POST", "/auth", .deferred { await login.callback($0) })
    }
}
