// swift-tools-version:6.0
import PackageDescription

/// Settings every Swift target shares: Swift 6 mode plus the upcoming features that keep
/// imports explicit and existentials visible, and that let a nonisolated async function run
/// on its caller's executor. Without that last one, every such call on a request path hops
/// through the runtime, which takes the task's status lock to find the request's executor
/// (about twenty times per Apple sign-in and fifty per login).
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
]

let package = Package(
    name: "Gatehouse",
    products: [
        .executable(name: "gatehouse", targets: ["gatehouse"])
    ],
    targets: [
        // C libraries from Debian, one module each. Every one is imported by exactly one
        // Swift wrapper module below, so C pointers never travel further.
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CHiredis", providers: [.apt(["libhiredis-dev"])]),

        // The C-free core: typed values, the Store protocol, logging.
        .target(name: "GatehouseCore", swiftSettings: strictSettings),
        // Wrappers: each is the only importer of its C module.
        .target(name: "GatehouseCrypto", dependencies: ["COpenSSL", "GatehouseCore"], swiftSettings: strictSettings),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "GatehouseCore"], swiftSettings: strictSettings),
        .target(name: "HTTPClient", dependencies: ["CCurl", "GatehouseCore"], swiftSettings: strictSettings),
        .target(name: "Storage", dependencies: ["CSQLite", "GatehouseCore"], swiftSettings: strictSettings),
        .target(name: "Compression", dependencies: ["CZlib"], swiftSettings: strictSettings),
        // Carrier one-click login: the declarative token → phone engine; C-free.
        .target(name: "Carrier", dependencies: ["GatehouseCore", "GatehouseCrypto", "Compression"], swiftSettings: strictSettings),
        // The shared store for many instances: hiredis on dedicated connection threads.
        .target(name: "RedisStore", dependencies: ["CHiredis", "GatehouseCore"], swiftSettings: strictSettings),
        // JWS/JWT/JWK on top of the crypto wrapper; C-free.
        // Provider definitions as data: reading, validation, templates, normalisation.
        .target(name: "ProviderEngine", dependencies: ["GatehouseCore", "GatehouseCrypto", "Carrier", "JOSE"], swiftSettings: strictSettings),
        .target(name: "JOSE", dependencies: ["GatehouseCore", "GatehouseCrypto"], swiftSettings: strictSettings),
        // Wiring: configuration, CLI, routes.
        .target(
            name: "GatehouseApp",
            dependencies: ["GatehouseCore", "GatehouseCrypto", "HTTPServer", "HTTPClient", "Storage", "RedisStore", "ProviderEngine", "JOSE", "Carrier"],
            swiftSettings: strictSettings
        ),
        // mimalloc replaces glibc's malloc for the whole process (Swift's runtime and every C
        // library): a login allocates and frees on one thread and releases on another, and
        // glibc's arenas spent about a tenth of a login's CPU on that (bench/README.md).
        .executableTarget(
            name: "gatehouse",
            dependencies: ["GatehouseApp"],
            swiftSettings: strictSettings,
            linkerSettings: [.linkedLibrary("mimalloc", .when(platforms: [.linux]))]
        ),

        // Helpers shared by the test targets: raw sockets, a process runner, temporary dirs.
        .target(name: "GatehouseTestSupport", path: "Tests/GatehouseTestSupport", swiftSettings: strictSettings),
        .testTarget(name: "GatehouseCoreTests", dependencies: ["GatehouseCore", "GatehouseTestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "GatehouseCryptoTests", dependencies: ["GatehouseCrypto", "GatehouseCore", "GatehouseTestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "CarrierTests", dependencies: ["Carrier", "Compression", "GatehouseCore", "GatehouseCrypto", "GatehouseTestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "ProviderEngineTests", dependencies: ["ProviderEngine", "GatehouseCore", "GatehouseCrypto", "Carrier", "JOSE"], swiftSettings: strictSettings),
        .testTarget(name: "JOSETests", dependencies: ["JOSE", "GatehouseCrypto", "GatehouseCore", "GatehouseTestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "GatehouseCore", "GatehouseTestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "HTTPClientTests", dependencies: ["HTTPClient", "GatehouseTestSupport"], swiftSettings: strictSettings),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "RedisStore", "GatehouseCore", "GatehouseTestSupport"], swiftSettings: strictSettings),
        .testTarget(
            name: "GatehouseAppTests",
            dependencies: ["GatehouseApp", "GatehouseCore", "HTTPClient", "HTTPServer", "GatehouseTestSupport", "gatehouse"],
            swiftSettings: strictSettings
        ),
    ]
)
