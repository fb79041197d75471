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
    /// The public URL, parsed once: its origin may start logins but never receive their result.
    let gateway: WebURL?

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
        gateway = WebURL(configuration.publicURL)
    }
}
