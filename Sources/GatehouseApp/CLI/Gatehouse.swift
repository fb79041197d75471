internal import GatehouseCore
internal import ProviderEngine
internal import GatehouseCrypto
internal import Storage
internal import RedisStore
#if canImport(Glibc)
internal import Glibc
#endif

/// The `gatehouse` command: parses the command line, loads settings, runs one command.
public enum Gatehouse {
    /// The release, printed by `gatehouse --version`.
    public static let version = "0.1.0"

    /// Blocks SIGTERM and SIGINT in the calling thread; call it first thing, before any thread
    /// exists, so that every thread inherits the block. `serve` reads them through dispatch
    /// signal sources (a signalfd), which only sees a signal that no thread can take: one
    /// landing on a thread that had it unblocked would be discarded (its disposition is
    /// SIG_IGN), and the server would never stop. Other commands unblock them again.
    public static func blockTerminationSignals() {
        maskTerminationSignals(SIG_BLOCK)
    }

    private static func maskTerminationSignals(_ how: Int32) {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(how, &signals, nil)
    }

    /// Exit codes: 0 success, 1 the operation failed, 2 bad usage or settings.
    public static func main(_ arguments: [String], environment: [String: String]) async -> Int32 {
        switch ParsedCommand.parse(Array(arguments.dropFirst())) {
        case .overview:
            Console.out(CommandSpec.overview)
            return 0
        case .version:
            Console.out("gatehouse \(version)")
            return 0
        case .usageError(let message, let usage):
            Console.err("gatehouse: \(message)\n\n\(usage)")
            return 2
        case .groupHelp(let group):
            Console.out(CommandSpec.groupHelp(group))
            return 0
        case .command(let command):
            if command.wantsHelp {
                Console.out(command.spec.help)
                return 0
            }
            return await run(command, environment: environment)
        }
    }

    private static func run(_ command: ParsedCommand, environment: [String: String]) async -> Int32 {
        let configuration: GatehouseConfiguration
        do {
            configuration = try ConfigurationLoader(flags: command.options, environment: environment).load()
        } catch {
            Console.err("gatehouse: \(error.message)")
            return 2
        }
        let handler = StreamLogHandler(format: configuration.logFormat)
        let logger = Logger(label: "gatehouse", level: configuration.logLevel, handler: handler)
        if command.spec.words == ["providers", "validate"] {
            return ProviderCommands.validate(command, configuration: configuration)
        }
        let providers = ProviderCatalog(directories: configuration.providerDirectories)
        if command.spec.words[0] == "providers" {
            return ProviderCommands.run(command, catalog: providers)
        }
        let context: GatewayContext
        do throws(ConfigurationError) {
            if command.spec.readsOnly, case .sqlite(let path) = configuration.store, !FileSystem.exists(path) {
                throw ConfigurationError(
                    "no database at '\(path)': nothing to read (check --store; 'gatehouse serve' or 'apps create' creates one)")
            }
            context = try openContext(
                configuration: configuration, providers: providers, logger: logger, serving: command.spec.words[0] == "serve",
                creating: !command.spec.readsOnly)
        } catch {
            Console.err("gatehouse: \(error.message)")
            return 2
        }
        if command.spec.words[0] != "serve" {
            // Ctrl-C ends a CLI verb the ordinary way: this thread takes the signal, and its
            // default action ends the process.
            maskTerminationSignals(SIG_UNBLOCK)
        }
        let status: Int32
        switch command.spec.words[0] {
        case "serve": status = await ServeCommand.run(context: context)
        case "apps": status = await AppCommands.run(command, registry: context.registry)
        default: status = await KeysetCommands.run(command, registry: context.registry)
        }
        await context.store.close()
        return status
    }

    /// `serving`: the context is for `gatehouse serve`, which must be its database's only server.
    /// `creating`: false for a command that only reads, which may create no master key.
    static func openContext(
        configuration: GatehouseConfiguration, providers: ProviderCatalog, logger: Logger, serving: Bool, creating: Bool = true
    ) throws(ConfigurationError) -> GatewayContext {
        let key = try MasterKey.resolve(configured: configuration.masterKey, store: configuration.store, create: creating)
        let opened: any Store
        switch configuration.store {
        case .memory:
            opened = MemoryStore()
        case .sqlite(let path):
            do { opened = try SQLiteStore(path: path, serving: serving, logger: logger) } catch {
                throw ConfigurationError("cannot open store sqlite:\(path): \(error.reason)")
            }
        case .redis(let host, let port, let database, let username, let password):
            // Connections open lazily and reopen by themselves, so the gateway may start
            // before Redis does; /readyz reports 503 until it is reachable.
            opened = RedisStore(endpoint: RedisEndpoint(host: host, port: port, database: database, username: username, password: password))
        }
        let metrics = Metrics()
        let store = InstrumentedStore(base: opened, metrics: metrics)
        let box: SecretBox
        do { box = try SecretBox(key: key) } catch { throw ConfigurationError("invalid master key: \(error.reason)") }
        let registry = AppRegistry(store: store, box: box, providers: providers)
        return GatewayContext(
            configuration: configuration, store: store, registry: registry, providers: providers, logger: logger, metrics: metrics)
    }
}

/// Standard output and error, unbuffered and line-oriented.
enum Console {
    static func out(_ text: String) { write(1, text) }
    static func err(_ text: String) { write(2, text) }

    static func json(_ value: some Encodable) {
        guard let bytes = try? JSONCoding.encodePretty(value) else { return }
        out(String(decoding: bytes, as: UTF8.self))
    }

    private static func write(_ descriptor: Int32, _ text: String) {
        let bytes = Array((text.hasSuffix("\n") ? text : text + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress.map { $0 + offset }, $0.count - offset) }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Left-aligned columns for human listings.
    static func table(_ header: [String], _ rows: [[String]]) {
        let all = [header] + rows
        var widths = [Int](repeating: 0, count: header.count)
        for row in all {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        var text = ""
        for row in all {
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }
            text += cells.joined(separator: "  ") + "\n"
        }
        out(text)
    }
}

/// The process environment as a dictionary.
public enum Environment {
    public static var current: [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }
}
