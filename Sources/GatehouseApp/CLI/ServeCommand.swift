internal import Dispatch
internal import GatehouseCore
internal import ProviderEngine
internal import HTTPClient
internal import HTTPServer
internal import Synchronization
#if canImport(Glibc)
internal import Glibc
#endif

/// `gatehouse serve`: start the HTTP server, wait for SIGTERM or SIGINT, drain, exit 0.
enum ServeCommand {
    static func run(context: GatewayContext) async -> Int32 {
        let logger = context.logger
        let defects = context.providers.defects
        if let first = defects.first {
            let more = defects.count > 1 ? " (and \(defects.count - 1) more; run 'gatehouse providers validate')" : ""
            Console.err("gatehouse: invalid provider definition: \(first)\(more)")
            return 2
        }
        guard !context.providers.all.isEmpty else {
            let directories = context.configuration.providerDirectories.joined(separator: ", ")
            Console.err("gatehouse: no provider definitions in \(directories): no login could start; "
                + "add providers/<id>/provider.json there, or leave --builtin-providers on")
            return 2
        }
        // Writes to a vanished peer must fail with EPIPE, not kill the process.
        signal(SIGPIPE, SIG_IGN)
        let termination = TerminationSignal()
        let outbound: HTTPClient
        do {
            outbound = try HTTPClient()
        } catch {
            Console.err("gatehouse: cannot start the HTTP client: \(error.reason)")
            return 2
        }
        defer { outbound.shutdown() }
        let server: HTTPServer
        do {
            var configuration = HTTPServer.Configuration(address: context.configuration.listen)
            configuration.maxHeaderBytes = context.configuration.maxHeaderBytes
            let metrics = context.metrics
            configuration.observer = { metrics.observe($0) }
            server = try HTTPServer(
                configuration: configuration,
                router: GatewayRoutes.router(context: context, outbound: outbound), logger: logger)
        } catch {
            Console.err("gatehouse: \(error.reason)")
            return 2
        }
        logger.notice("Gatehouse listening", [
            "listen.host": context.configuration.listen.host, "listen.port": "\(server.port)",
            "store.kind": context.configuration.store.kind, "public_url": context.configuration.publicURL,
            "providers.count": "\(context.providers.all.count)",
            "admin_api": context.configuration.adminToken == nil ? "off" : "on", "version": Gatehouse.version,
        ])
        // A shared store may start after the gateway: say so, and keep serving (503 until then).
        do throws(StoreError) {
            try await context.store.ping()
        } catch {
            logger.warning("Store not reachable yet; requests needing it answer 503 until it is", ["error": error.description])
        }
        let signalNumber = await termination.wait()
        logger.notice("Shutting down", ["signal": signalNumber == SIGTERM ? "SIGTERM" : "SIGINT", "requests.in_flight": "\(server.inFlight)"])
        await server.shutdown(drainTimeout: .seconds(10))
        logger.notice("Stopped")
        return 0
    }
}

/// Waits for SIGTERM or SIGINT through dispatch signal sources, so the handler runs as
/// ordinary code instead of inside an async-signal context. `@unchecked Sendable` because
/// dispatch sources are thread-safe but not annotated; the array is never mutated after init.
final class TerminationSignal: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]
    private let state = Mutex<(fired: Int32?, waiter: CheckedContinuation<Int32, Never>?)>((nil, nil))

    init() {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            sources.append(source)
        }
        self.sources = sources
        for (source, number) in zip(sources, [SIGTERM, SIGINT]) {
            source.setEventHandler { [weak self] in self?.fire(number) }
            source.resume()
        }
    }

    private func fire(_ number: Int32) {
        let waiter: CheckedContinuation<Int32, Never>? = state.withLock { state in
            guard state.fired == nil else { return nil }
            state.fired = number
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: number)
    }

    func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            let fired: Int32? = state.withLock { state in
                if state.fired == nil { state.waiter = continuation }
                return state.fired
            }
            if let fired { continuation.resume(returning: fired) }
        }
    }
}
