@testable import GatehouseApp
import GatehouseCore
import GatehouseTestSupport
import Foundation
import HTTPClient
import HTTPServer
import Testing

@Suite("Configuration")
struct ConfigurationTests {
    @Test("a flag beats the environment, which beats the file, which beats the default")
    func precedence() throws {
        let workspace = try Workspace()
        let file = workspace.path + "/config.json"
        try #"{"listen": "127.0.0.1:1111", "public_url": "https://file.example", "log_level": "debug", "providers": ["\#(workspace.providers)"]}"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let fileOnly = try ConfigurationLoader(flags: ["config": [file]], environment: [:]).load()
        #expect(fileOnly.listen.port == 1111)
        #expect(fileOnly.publicURL == "https://file.example")
        #expect(fileOnly.logLevel == .debug)
        #expect(fileOnly.store == .sqlite(path: "./data/gatehouse.db"), "default")

        let environment = ["GATEHOUSE_LISTEN": "127.0.0.1:2222", "GATEHOUSE_LOG_LEVEL": "error"]
        let withEnvironment = try ConfigurationLoader(flags: ["config": [file]], environment: environment).load()
        #expect(withEnvironment.listen.port == 2222)
        #expect(withEnvironment.logLevel == .error)
        #expect(withEnvironment.publicURL == "https://file.example")

        let withFlag = try ConfigurationLoader(flags: ["config": [file], "listen": ["127.0.0.1:3333"]], environment: environment).load()
        #expect(withFlag.listen.port == 3333)
    }

    @Test("the header limit defaults to 16 KiB and takes byte counts from 8 KiB to 256 KiB")
    func headerLimit() throws {
        let workspace = try Workspace()
        let providers = ["providers": [workspace.providers]]
        #expect(try ConfigurationLoader(flags: providers, environment: [:]).load().maxHeaderBytes == 16_384)
        let raised = try ConfigurationLoader(flags: providers, environment: ["GATEHOUSE_MAX_HEADER_BYTES": "65536"]).load()
        #expect(raised.maxHeaderBytes == 65_536)
        for bad in ["4096", "262145", "16k", "-1"] {
            let error = #expect(throws: ConfigurationError.self) {
                try ConfigurationLoader(flags: providers.merging(["max-header-bytes": [bad]]) { $1 }, environment: [:]).load()
            }
            #expect(error?.message.contains("invalid max header bytes '\(bad)'") == true)
        }
    }

    @Test("a config file may write counts as JSON numbers; fractions and other settings as numbers are refused")
    func numbersInFile() throws {
        let workspace = try Workspace()
        func load(_ json: String) throws -> GatehouseConfiguration {
            let file = workspace.path + "/config.json"
            try json.write(toFile: file, atomically: true, encoding: .utf8)
            return try ConfigurationLoader(flags: ["config": [file], "providers": [workspace.providers]], environment: [:]).load()
        }
        let loaded = try load(#"{"state_ttl": 600, "code_ttl": "90", "upstream_timeout": 5, "max_header_bytes": 32768}"#)
        #expect(loaded.stateTTL == 600 && loaded.codeTTL == 90 && loaded.upstreamTimeout == 5 && loaded.maxHeaderBytes == 32_768)
        let fraction = #expect(throws: ConfigurationError.self) { try load(#"{"code_ttl": 1.5}"#) }
        #expect(fraction?.message == "invalid code TTL '1.5': expected whole seconds from 1 to 86400")
        let listen = #expect(throws: ConfigurationError.self) { try load(#"{"listen": 6284}"#) }
        #expect(listen?.message.hasSuffix("'listen' must be a string") == true)
        let flag = #expect(throws: ConfigurationError.self) { try load(#"{"state_ttl": true}"#) }
        #expect(flag?.message.hasSuffix("'state_ttl' must be a number") == true)
    }

    @Test("the master key comes from settings or from a 0600 file beside the database")
    func masterKey() throws {
        let workspace = try Workspace()
        let explicit = [UInt8](repeating: 1, count: 32)
        #expect(try MasterKey.resolve(configured: explicit, store: .memory) == explicit)
        let path = workspace.path + "/data/x.db"
        let first = try MasterKey.resolve(configured: nil, store: .sqlite(path: path))
        let second = try MasterKey.resolve(configured: nil, store: .sqlite(path: path))
        #expect(first == second && first.count == 32)
        let attributes = try FileManager.default.attributesOfItem(atPath: workspace.path + "/data/master.key")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(throws: ConfigurationError.self) { try MasterKey.resolve(configured: nil, store: .redis(host: "h", port: 1, database: 0)) }
    }

    @Test("store locations parse")
    func storeLocations() {
        #expect(StoreLocation("memory:") == .memory)
        #expect(StoreLocation("sqlite:/var/lib/g.db") == .sqlite(path: "/var/lib/g.db"))
        #expect(StoreLocation("redis://cache:6380/2") == .redis(host: "cache", port: 6380, database: 2))
        #expect(StoreLocation("redis://cache") == .redis(host: "cache", port: 6379, database: 0))
        // Credentials: a password alone, or an ACL user and password; percent-encoded; never printed.
        #expect(StoreLocation("redis://:s%40cret@cache:6380/1") == .redis(host: "cache", port: 6380, database: 1, password: "s@cret"))
        #expect(StoreLocation("redis://s3cret@cache") == .redis(host: "cache", port: 6379, database: 0, password: "s3cret"))
        #expect(StoreLocation("redis://app:pw@cache/2") == .redis(host: "cache", port: 6379, database: 2, username: "app", password: "pw"))
        #expect(StoreLocation("redis://app:pw@cache/2")?.description == "redis://app:***@cache:6379/2")
        #expect(StoreLocation("redis://:@cache") == nil)
        for bad in ["", "sqlite:", "memory", "redis://:1/0", "redis://h:0/0", "redis://h:1/x", "mysql://x"] {
            #expect(StoreLocation(bad) == nil, "\(bad)")
        }
    }

    @Test("command lines parse into commands, options and positionals")
    func commandLine() {
        guard case .command(let create) = ParsedCommand.parse(["apps", "create", "--name", "demo", "--domain=a", "--domain", "b", "--json"]) else {
            Issue.record("expected a command")
            return
        }
        #expect(create.spec.words == ["apps", "create"])
        #expect(create.values("domain") == ["a", "b"])
        #expect(create.json)
        guard case .usageError = ParsedCommand.parse(["apps", "create", "--colour", "x"]) else {
            Issue.record("expected a usage error")
            return
        }
        guard case .overview = ParsedCommand.parse([]) else {
            Issue.record("expected the overview")
            return
        }
    }

    @Test("rate limits: N/s, N/min, N/h or off, on by default; trusted proxies are addresses or blocks")
    func rateLimits() throws {
        let workspace = try Workspace()
        let providers = ["providers": [workspace.providers]]
        let defaults = try ConfigurationLoader(flags: providers, environment: [:]).load()
        #expect(defaults.rateLimitApp == BucketRule(capacity: 20, perSecond: 20))
        #expect(defaults.rateLimitAddress == BucketRule(capacity: 30, perSecond: 0.5))
        #expect(defaults.trustedProxies.isEmpty)
        let environment = [
            "GATEHOUSE_RATE_LIMIT_APP": "off", "GATEHOUSE_RATE_LIMIT_ADDRESS": "100/h",
            "GATEHOUSE_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.7 fd00::/8",
        ]
        let set = try ConfigurationLoader(flags: providers, environment: environment).load()
        #expect(set.rateLimitApp == nil)
        #expect(set.rateLimitAddress?.description == "100/h")
        #expect(set.trustedProxies.map(\.description) == ["10.0.0.0/8", "192.0.2.7", "fd00::/8"])
        let ranges = set.trustedProxies
        #expect(ranges[0].contains(try #require(PeerAddress("10.200.1.2"))))
        #expect(!ranges[0].contains(try #require(PeerAddress("11.0.0.1"))))
        #expect(ranges[1].contains(try #require(PeerAddress("192.0.2.7"))))
        #expect(!ranges[1].contains(try #require(PeerAddress("192.0.2.8"))))
        #expect(ranges[2].contains(try #require(PeerAddress("fd12:3456::1"))))
        #expect(!ranges[2].contains(try #require(PeerAddress("fe80::1"))))
        #expect(PeerAddress("::ffff:192.0.2.1")?.description == "0:0:0:0:0:ffff:c000:201")
        for bad in ["1.2.3", "1.2.3.256", "::1::2", "1:2:3:4:5:6:7:8:9", "+1::", "x"] { #expect(PeerAddress(bad) == nil, "\(bad)") }
        for (name, bad) in [("GATEHOUSE_RATE_LIMIT_APP", "20"), ("GATEHOUSE_RATE_LIMIT_APP", "0/s"), ("GATEHOUSE_RATE_LIMIT_ADDRESS", "5/day"),
                            ("GATEHOUSE_TRUSTED_PROXIES", "10.0.0.0/33"), ("GATEHOUSE_TRUSTED_PROXIES", "proxy.local")] {
            #expect(throws: ConfigurationError.self, "\(name)=\(bad)") {
                try ConfigurationLoader(flags: providers, environment: [name: bad]).load()
            }
        }
    }

    @Test("--admin-token-file reads the token from a file (kept out of ps); giving both is refused")
    func adminTokenFile() throws {
        let workspace = try Workspace()
        let path = workspace.path + "/admin-token"
        try "file-token-0123456789abcdef\n".write(toFile: path, atomically: true, encoding: .utf8)
        var flags = ["providers": [workspace.providers], "admin-token-file": [path]]
        #expect(try ConfigurationLoader(flags: flags, environment: [:]).load().adminToken == "file-token-0123456789abcdef")
        flags["admin-token"] = ["flag-token-0123456789abcdef"]
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader(flags: flags, environment: [:]).load() }
        let missing = ["providers": [workspace.providers], "admin-token-file": [workspace.path + "/nope"]]
        #expect(throws: ConfigurationError.self) { try ConfigurationLoader(flags: missing, environment: [:]).load() }
    }
}

@Suite("Provider catalogue stack")
struct CatalogueStackTests {
    static let extra = #"{"name": "Extra", "oauth2": {"authorize": "https://extra.example/a", "access_token": "https://extra.example/t", "scopeless": true}}"#

    @Test("--providers adds to the built-in catalogue and overrides it by id; off serves only the directory")
    func stacked() async throws {
        let builtin = try #require(FileSystem.builtinProvidersDirectory())
        let shipped = try FileManager.default.contentsOfDirectory(atPath: builtin).filter {
            FileManager.default.fileExists(atPath: builtin + "/" + $0 + "/provider.json")
        }.count
        let workspace = try Workspace(providers: ["extra": Self.extra, "github": Workspace.defaultProviders["github"] ?? ""])
        let listed = try await GatehouseProcess.run(
            ["providers", "list", "--json", "--providers", workspace.providers], directory: workspace.path)
        let entries = try #require(JSONValue.parse(Array(listed.stdout.utf8))?.arrayValue)
        #expect(entries.count == shipped + 1, "the built-ins and one more")
        #expect(entries.contains { $0["id"] == "extra" })
        #expect(entries.contains { $0["id"] == "github" && $0["name"] == "GitHub" })
        let shown = try await GatehouseProcess.run(["providers", "show", "github", "--providers", workspace.providers], directory: workspace.path)
        #expect(shown.stdout.contains("github.example"), "the later directory's github replaces the built-in one")
        let only = try await GatehouseProcess.run(
            ["providers", "list", "--json", "--providers", workspace.providers, "--builtin-providers", "off"], directory: workspace.path)
        #expect(JSONValue.parse(Array(only.stdout.utf8))?.arrayValue?.count == 2)
        // The environment and the config file stack the same way.
        let environment = try await GatehouseProcess.run(
            ["providers", "list", "--json"], environment: ["GATEHOUSE_PROVIDERS": workspace.providers], directory: workspace.path)
        #expect(JSONValue.parse(Array(environment.stdout.utf8))?.arrayValue?.count == shipped + 1)
        // A served gateway counts them too.
        let gateway = try await Gateway.start(workspace: workspace, extra: ["--builtin-providers", "on"])
        let catalogue = try await gateway.send("GET", "/api/providers")
        #expect(catalogue.json?["data"]?.arrayValue?.count == shipped + 1, "\(String(decoding: catalogue.body.prefix(200), as: UTF8.self))")
        _ = try await gateway.stop()
    }

    @Test("a start with no provider at all is refused with a message")
    func noProviders() async throws {
        let empty = try Workspace(providers: [:])
        try FileManager.default.createDirectory(atPath: empty.providers, withIntermediateDirectories: true)
        let refused = try await GatehouseProcess.run(
            ["serve", "--store", "memory:", "--listen", "127.0.0.1:0", "--providers", empty.providers, "--builtin-providers", "off"],
            directory: empty.path)
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("no provider definitions in \(empty.providers)"), "\(refused.stderr)")
        let none = try await GatehouseProcess.run(["serve", "--store", "memory:", "--builtin-providers", "off"], directory: empty.path)
        #expect(none.status == 2 && none.stderr.contains("no --providers DIR"), "\(none.stderr)")
    }

    @Test("public_url defaults to the listen address, with localhost for a loopback or wildcard host")
    func publicURLDefault() throws {
        func url(_ listen: String) throws -> String {
            try ConfigurationLoader(flags: ["listen": [listen]], environment: [:]).load().publicURL
        }
        #expect(try url("127.0.0.1:8080") == "http://localhost:8080")
        #expect(try url("0.0.0.0:9000") == "http://localhost:9000")
        #expect(try url("[::]:9000") == "http://localhost:9000")
        #expect(try url("192.0.2.10:6284") == "http://192.0.2.10:6284")
        #expect(try ConfigurationLoader(flags: [:], environment: [:]).load().publicURL == "http://localhost:6284")
    }
}
