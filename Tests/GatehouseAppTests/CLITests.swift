import GatehouseCore
import GatehouseTestSupport
import Foundation
import HTTPClient
import Testing

@Suite("Command line", .serialized)
struct CLITests {
    @Test("apps create --json prints key and secret; the app survives a restart")
    func createAndRestart() async throws {
        let workspace = try Workspace()
        let store = ["--store", "sqlite:./data/gatehouse.db", "--providers", workspace.providers]
        let created = try await GatehouseProcess.run(
            ["apps", "create", "--name", "demo", "--domain", "localhost", "--json"] + store, directory: workspace.path)
        #expect(created.status == 0, "\(created.stderr)")
        let app = try JSONCoding.decode(JSONValue.self, from: Array(created.stdout.utf8))
        let key = try #require(app["key"]?.stringValue)
        let secret = try #require(app["secret"]?.stringValue)
        #expect(key.utf8.count == 27 && secret.utf8.count == 27)
        #expect(app["domains"] == ["localhost"])

        let keyset = try await GatehouseProcess.run(
            ["keysets", "set", "--app", key, "--provider", "github", "--param", "client_id=my-client-id",
             "--param", "client_secret=very-secret-client-value", "--param", "scope=user", "--param", "scope=repo",
             "--response-type", "code"] + store, directory: workspace.path)
        #expect(keyset.status == 0, "\(keyset.stderr)")

        let gateway = try await Gateway.start(workspace: workspace, store: "sqlite:./data/gatehouse.db")
        let shown = try await gateway.send("GET", "/api/admin/apps/\(key)")
        #expect(shown.status == 200)
        #expect(shown.json?["secret"]?.stringValue == secret)
        #expect(shown.json?["name"] == "demo")
        let keysets = try #require(shown.json?["keysets"]?.arrayValue)
        #expect(keysets.first?["parameters"]?["client_id"] == "my-client-id")
        #expect(keysets.first?["parameters"]?["client_secret"] == "********", "listings mask secrets")
        #expect(keysets.first?["parameters"]?["scope"] == ["user", "repo"])
        #expect(keysets.first?["response_type"] == "code")
        #expect(try await gateway.stop() == 0)

        let onDisk = workspace.allBytes(under: "data")
        #expect(onDisk.count > 4096)
        #expect(!onDisk.contains(bytes: Array(secret.utf8)), "the app secret is sealed at rest")
        #expect(!onDisk.contains(bytes: Array("very-secret-client-value".utf8)), "the client secret is sealed at rest")
        #expect(onDisk.contains(bytes: Array(key.utf8)), "the scan itself can find plain text")
        #expect(!gateway.process.standardError.contains(secret), "logs never carry the secret")

        let listed = try await GatehouseProcess.run(["apps", "list", "--json"] + store, directory: workspace.path)
        #expect(listed.stdout.contains(key))
        #expect(!listed.stdout.contains(secret), "listings leave secrets out")
        let rotated = try await GatehouseProcess.run(["apps", "rotate-secret", key, "--json"] + store, directory: workspace.path)
        let newSecret = try JSONCoding.decode(JSONValue.self, from: Array(rotated.stdout.utf8))["secret"]?.stringValue
        #expect(newSecret != nil && newSecret != secret)
        let keysetList = try await GatehouseProcess.run(["keysets", "list", "--app", key] + store, directory: workspace.path)
        #expect(keysetList.stdout.contains("github") && !keysetList.stdout.contains("very-secret-client-value"))
        let removed = try await GatehouseProcess.run(["keysets", "delete", "--app", key, "--provider", "github"] + store, directory: workspace.path)
        #expect(removed.status == 0)
        let deleted = try await GatehouseProcess.run(["apps", "delete", key] + store, directory: workspace.path)
        #expect(deleted.status == 0)
        let missing = try await GatehouseProcess.run(["apps", "show", key] + store, directory: workspace.path)
        #expect(missing.status == 1)
        #expect(missing.stderr == "gatehouse: no app with this key\n")
    }

    @Test(
        "bad settings exit 2 with one clear line",
        arguments: [
            ["serve", "--listen", "nonsense"],
            ["serve", "--listen", "127.0.0.1:70000"],
            ["serve", "--store", "postgres://x"],
            ["serve", "--store", "sqlite:"],
            ["serve", "--master-key", "c2hvcnQ="],
            ["serve", "--log-level", "loud"],
            ["serve", "--log-format", "xml"],
            ["serve", "--public-url", "ftp://x"],
            ["serve", "--admin-token", "short"],
            ["serve", "--providers", "/nonexistent/providers"],
            ["serve", "--config", "/nonexistent/config.json"],
            ["serve", "--config", "bad.json"],
            ["serve", "--config", "unknown-key.json"],
            ["serve", "--builtin-providers", "maybe"],
            ["keysets", "set", "--app", "x", "--provider", "github", "--param", "novalue", "--store", "memory:"],
        ])
    func badSettings(arguments: [String]) async throws {
        let workspace = try Workspace()
        try "{not json".write(toFile: workspace.path + "/bad.json", atomically: true, encoding: .utf8)
        try #"{"listen": "127.0.0.1:0", "colour": "blue"}"#.write(toFile: workspace.path + "/unknown-key.json", atomically: true, encoding: .utf8)
        let result = try await GatehouseProcess.run(
            arguments, environment: ["GATEHOUSE_PROVIDERS": workspace.providers, "GATEHOUSE_STORE": "memory:"],
            directory: workspace.path)
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr)")
        #expect(lines.first?.hasPrefix("gatehouse: ") == true)
    }

    @Test(
        "usage mistakes exit 2 with the mistake and then the usage that fits, on stderr",
        arguments: [
            (["--bogus"], "Commands:"), (["serve", "--bogus", "1"], "Usage: gatehouse serve"),
            (["serve", "--listen"], "Usage: gatehouse serve"), (["frobnicate"], "Commands:"),
            (["apps", "explode"], "gatehouse apps list"), (["apps", "show"], "Usage: gatehouse apps show KEY"),
        ])
    func usageMistakes(arguments: [String], usage: String) async throws {
        let workspace = try Workspace()
        let result = try await GatehouseProcess.run(arguments, environment: ["GATEHOUSE_STORE": "memory:"], directory: workspace.path)
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.first?.hasPrefix("gatehouse: ") == true, "\(result.stderr)")
        #expect(result.stderr.contains(usage), "\(result.stderr)")
    }

    @Test("gatehouse apps --help lists the apps verbs; read-only verbs on a missing database exit 2 and create nothing")
    func groupHelpAndReadOnly() async throws {
        let workspace = try Workspace()
        let help = try await GatehouseProcess.run(["apps", "--help"], directory: workspace.path)
        #expect(help.status == 0)
        for verb in ["apps create", "apps list", "apps show KEY", "apps delete KEY", "apps rotate-secret KEY"] {
            #expect(help.stdout.contains("gatehouse " + verb), "\(help.stdout)")
        }
        #expect(!help.stdout.contains("keysets set"))
        let store = ["--store", "sqlite:./data/gatehouse.db", "--providers", workspace.providers]
        for verb in [["apps", "list"], ["apps", "show", "somekey"], ["keysets", "list", "--app", "somekey"]] {
            let result = try await GatehouseProcess.run(verb + store, directory: workspace.path)
            #expect(result.status == 2, "\(verb)")
            #expect(result.stderr.contains("no database at './data/gatehouse.db'"), "\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: workspace.path + "/data"), "a read-only verb created the data directory")
        // A database without its master key: reading it must not mint a new key beside it.
        #expect(try await GatehouseProcess.run(["apps", "create", "--name", "a", "--domain", "a.example"] + store, directory: workspace.path).status == 0)
        try FileManager.default.removeItem(atPath: workspace.path + "/data/master.key")
        let keyless = try await GatehouseProcess.run(["apps", "list"] + store, directory: workspace.path)
        #expect(keyless.status == 2 && keyless.stderr.contains("no master key"), "\(keyless.stderr)")
        #expect(!FileManager.default.fileExists(atPath: workspace.path + "/data/master.key"))
    }

    @Test("keysets set --param-file reads a PEM key from a file; the gateway publishes its public half, and a missing file exits 2")
    func parameterFiles() async throws {
        let keyed = #"{"name": "Keyed", "oauth2": {"authorize": "https://k.example/a", "access_token": "https://k.example/t", "client_authentication": "private_key_jwt", "parameters": {"client_id": "string", "private_key": "string", "key_id": "string"}}}"#
        let workspace = try Workspace(providers: ["keyed": keyed])
        let store = ["--store", "sqlite:./data/gatehouse.db", "--providers", workspace.providers]
        let openssl = try OpenSSLTool()
        let pem = try openssl.makeRSAKey("app.pem")
        try pem.write(toFile: workspace.path + "/app.pem", atomically: true, encoding: .utf8)
        let created = try await GatehouseProcess.run(["apps", "create", "--name", "k", "--domain", "localhost", "--json"] + store, directory: workspace.path)
        let key = try #require(JSONValue.parse(Array(created.stdout.utf8))?["key"]?.stringValue, "\(created.stderr)")
        let set = try await GatehouseProcess.run(
            ["keysets", "set", "--app", key, "--provider", "keyed", "--param", "client_id=c1", "--param", "key_id=k1",
             "--param-file", "private_key=app.pem"] + store, directory: workspace.path)
        #expect(set.status == 0, "\(set.stderr)")
        let missing = try await GatehouseProcess.run(
            ["keysets", "set", "--app", key, "--provider", "keyed", "--param-file", "private_key=nope.pem"] + store, directory: workspace.path)
        #expect(missing.status == 2 && missing.stderr.contains("cannot read nope.pem"), "\(missing.stderr)")

        let gateway = try await Gateway.start(workspace: workspace, store: "sqlite:./data/gatehouse.db")
        let published = try await gateway.send("GET", "/auth/keyed/jwks?k=\(key)")
        let first = published.json?["keys"]?.arrayValue?.first
        #expect(first?["kid"] == "k1" && first?["kty"] == "RSA" && first?["d"] == nil, "\(published.body)")
        #expect(try await gateway.stop() == 0)
    }

    @Test("a port already in use exits 2 with one line")
    func portInUse() async throws {
        let gateway = try await Gateway.start()
        let result = try await GatehouseProcess.run(
            ["serve", "--listen", "127.0.0.1:\(gateway.port)", "--store", "memory:", "--providers", gateway.workspace.providers],
            directory: gateway.workspace.path)
        #expect(result.status == 2)
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.contains("Address already in use"), "the line names the reason: \(result.stderr)")
        _ = try await gateway.stop()
    }

    @Test("help is available for every command")
    func help() async throws {
        let workspace = try Workspace()
        let overview = try await GatehouseProcess.run(["--help"], directory: workspace.path)
        #expect(overview.status == 0 && overview.stdout.contains("apps create"))
        let create = try await GatehouseProcess.run(["apps", "create", "--help"], directory: workspace.path)
        #expect(create.status == 0 && create.stdout.contains("--domain"))
        let version = try await GatehouseProcess.run(["--version"], directory: workspace.path)
        #expect(version.status == 0 && version.stdout.range(of: #"^gatehouse \d+\.\d+\.\d+\n$"#, options: .regularExpression) != nil)
    }

    @Test("providers list and validate read the configured directories")
    func providers() async throws {
        let carrier = #"{"name":"C","native":{"kind":"carrier","inputs":{"token":{}},"request":{"url":"/x"},"response":{"success":{"all":[{"path":"$.c","eq":1}]},"phone":{"path":"$.p","decrypt":{"op":"aes","mode":"cbc","key":"k"}}}}}"#
        let workspace = try Workspace(providers: [
            "github": Workspace.defaultProviders["github"] ?? "", "broken": "[1,2]", "carrier": carrier,
        ])
        let environment = ["GATEHOUSE_PROVIDERS": workspace.providers]
        let list = try await GatehouseProcess.run(["providers", "list", "--json"], environment: environment, directory: workspace.path)
        #expect(list.stdout.contains("GitHub"))
        let validate = try await GatehouseProcess.run(["providers", "validate"], environment: environment, directory: workspace.path)
        #expect(validate.status == 1)
        #expect(validate.stderr.contains("broken/provider.json: /: must be an object"))
        #expect(validate.stderr.contains("carrier/provider.json: /native/response/phone/decrypt/iv: required in cbc mode"))
        #expect(validate.stderr.contains("carrier/provider.json: /native/request/url: a relative URL needs the provider's base url"))
        let serve = try await GatehouseProcess.run(["serve", "--store", "memory:"], environment: environment, directory: workspace.path)
        #expect(serve.status == 2, "a bad provider file stops the server from starting")
    }

    @Test("providers validate takes a catalogue folder, one provider's folder or a file; an empty folder is a defect")
    func validatePaths() async throws {
        let workspace = try Workspace(providers: ["github": Workspace.defaultProviders["github"] ?? "", "broken": #"{"name": "B"}"#])
        try FileManager.default.createDirectory(atPath: workspace.path + "/empty", withIntermediateDirectories: true)
        func validate(_ path: String) async throws -> (status: Int32, stdout: String, stderr: String) {
            try await GatehouseProcess.run(["providers", "validate", path], directory: workspace.path)
        }
        for good in ["providers/github", "providers/github/", "providers/github/provider.json"] {
            let result = try await validate(good)
            #expect(result.status == 0 && result.stdout.hasPrefix("ok: "), "\(good): \(result.stderr)")
        }
        let broken = try await validate("providers/broken")
        #expect(broken.status == 1)
        #expect(broken.stderr == "providers/broken/provider.json: /: a provider needs an oauth2, oauth1 or native block\n")
        let brokenFile = try await validate("providers/broken/provider.json")
        #expect(brokenFile.status == 1 && brokenFile.stderr == broken.stderr)
        let catalogue = try await validate("providers")
        #expect(catalogue.status == 1 && catalogue.stderr == broken.stderr)
        let empty = try await validate("empty")
        #expect(empty.status == 1)
        #expect(empty.stderr.hasPrefix("empty: no provider definitions"), "\(empty.stderr)")
        let missing = try await validate("nowhere")
        #expect(missing.status == 1 && missing.stderr.hasPrefix("nowhere: no such file or folder"))
    }
}
