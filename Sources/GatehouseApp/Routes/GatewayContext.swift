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
}
