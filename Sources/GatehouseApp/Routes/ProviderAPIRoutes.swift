internal import HTTPServer

/// The SDKs' calls with a user's token: `me` and the `/request` proxy, each with its CORS
/// preflight (interface.md §2).
enum ProviderAPIRoutes {
    static func register(on router: inout Router, api: ProviderAPI) {
        router.add("GET", "/auth/:provider/me", .deferred { await api.me($0) })
        router.add("OPTIONS", "/auth/:provider/me", .immediate { EchoCORS.preflight($0) })
        for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
            router.add(method, "/request/:provider/*url", .deferred { await api.proxy($0) })
        }
        router.add("OPTIONS", "/request/:provider/*url", .immediate { EchoCORS.preflight($0) })
    }
}
