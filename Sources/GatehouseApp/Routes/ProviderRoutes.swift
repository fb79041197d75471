internal import GatehouseCore
internal import HTTPServer
internal import ProviderEngine

/// The public provider API: `/api/providers`, `/api/providers/:p[?extend=true]`, the logo,
/// and `/api/extended-endpoints`, all JSend with CORS open, as OAuth.io serves them.
enum ProviderRoutes {
    static func register(on router: inout Router, providers: ProviderCatalog) {
        let list = JSend.withOpenCORS(JSend.success(.array(providers.all.map { entry in
            .object(["provider": .string(entry.definition.id), "name": .string(entry.definition.name)])
        })))
        router.add("GET", "/api/providers", .immediate { _ in list })
        router.add("GET", "/api/extended-endpoints", .immediate { _ in JSend.withOpenCORS(JSend.success(.array([]))) })
        router.add("GET", "/api/providers/:provider", .immediate { request in
            guard let definition = providers.definition(request.parameter("provider").lowercased()) else {
                return JSend.withOpenCORS(JSend.error(404, "Unknown provider"))
            }
            let body = request.queryValue("extend") == "true" ? ExtendedView.document(definition) : documentWithID(definition)
            return JSend.withOpenCORS(JSend.success(body))
        })
        router.add("GET", "/api/providers/:provider/logo", .immediate { request in
            guard let entry = providers.entry(request.parameter("provider").lowercased()), let path = entry.logoPath,
                let bytes = FileSystem.read(path, limit: 1 << 20)
            else { return JSend.withOpenCORS(JSend.error(404, "No logo")) }
            var headers = HTTPHeaders()
            headers.add("Content-Type", path.hasSuffix(".svg") ? "image/svg+xml" : "image/png")
            headers.add("Cache-Control", "public, max-age=86400")
            headers.add("X-Content-Type-Options", "nosniff")
            if path.hasSuffix(".svg") { headers.add("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'") }
            return JSend.withOpenCORS(HTTPResponse(status: 200, headers: headers, body: bytes))
        })
        for pattern in ["/api/providers", "/api/providers/*rest", "/api/extended-endpoints"] {
            router.add("OPTIONS", pattern, .immediate { _ in JSend.withOpenCORS(.empty(200)) })
        }
    }

    private static func documentWithID(_ definition: ProviderDefinition) -> JSONValue {
        var object = definition.document.objectValue ?? [:]
        object["provider"] = .string(definition.id)
        return .object(object)
    }
}
