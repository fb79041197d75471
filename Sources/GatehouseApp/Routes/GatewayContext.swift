internal import GatehouseCore
internal import ProviderEngine

/// What route handlers share: the registry, the store and the configuration.
struct GatewayContext: Sendable {
    let configuration: GatehouseConfiguration
    let store: any Store
    let registry: AppRegistry
    let providers: ProviderCatalog
    let logger: Logger
    /// What `/metrics` reports; the store above already counts its failures into it.
    let metrics: Metrics
    /// The public URL's host, which domain checks always admit: parsed once, not per sign-in.
    let gatewayHost: String?

    init(
        configuration: GatehouseConfiguration, store: any Store, registry: AppRegistry, providers: ProviderCatalog, logger: Logger,
        metrics: Metrics
    ) {
        self.configuration = configuration
        self.store = store
        self.registry = registry
        self.providers = providers
        self.logger = logger
        self.metrics = metrics
        gatewayHost = WebURL(configuration.publicURL)?.host
    }
}
