/// One CLI command: its words, what it accepts, and its help text.
struct CommandSpec: Sendable {
    let words: [String]
    let usage: String
    let summary: String
    /// Options that take a value, beyond the global ones.
    let valueOptions: Set<String>
    /// How many positional arguments follow the command words.
    let positionals: ClosedRange<Int>

    /// Settings every command accepts (interface.md §1).
    static let globalValueOptions: Set<String> = [
        "config", "listen", "public-url", "store", "providers", "admin-token", "master-key", "log-level", "log-format",
        "state-ttl", "code-ttl", "upstream-timeout", "max-header-bytes", "admin-token-file", "rate-limit-app",
        "rate-limit-address", "trusted-proxies", "builtin-providers",
    ]
    static let globalFlags: Set<String> = ["json", "help", "version"]

    /// Commands that only read the store: they never create a database or a master key.
    var readsOnly: Bool { [["apps", "list"], ["apps", "show"], ["keysets", "list"]].contains(words) }

    static let all: [CommandSpec] = [
        CommandSpec(
            words: ["serve"], usage: "gatehouse serve [settings]",
            summary: "Run the gateway until SIGTERM or SIGINT, then drain in-flight requests and exit 0.",
            valueOptions: [], positionals: 0...0),
        CommandSpec(
            words: ["apps", "create"], usage: "gatehouse apps create --name NAME --domain DOMAIN [--domain DOMAIN ...]",
            summary: "Register an app; prints its public key and secret.", valueOptions: ["name", "domain"],
            positionals: 0...0),
        CommandSpec(
            words: ["apps", "list"], usage: "gatehouse apps list", summary: "List apps (without secrets).",
            valueOptions: [], positionals: 0...0),
        CommandSpec(
            words: ["apps", "show"], usage: "gatehouse apps show KEY", summary: "Show an app, its secret and its keysets.",
            valueOptions: [], positionals: 1...1),
        CommandSpec(
            words: ["apps", "delete"], usage: "gatehouse apps delete KEY", summary: "Delete an app and its keysets.",
            valueOptions: [], positionals: 1...1),
        CommandSpec(
            words: ["apps", "rotate-secret"], usage: "gatehouse apps rotate-secret KEY",
            summary: "Replace an app's secret; prints the new one.", valueOptions: [], positionals: 1...1),
        CommandSpec(
            words: ["keysets", "set"],
            usage: "gatehouse keysets set --app KEY --provider ID --param NAME=VALUE ... [--param-file NAME=PATH ...] "
                + "[--response-type token|code|both] [--device-sign-in on|off]",
            summary: "Set an app's credentials for a provider. Repeat a NAME to give a list (e.g. scopes); "
                + "--param-file reads a value, such as a PEM key, from a file.",
            valueOptions: ["app", "provider", "param", "param-file", "response-type", "device-sign-in"], positionals: 0...0),
        CommandSpec(
            words: ["keysets", "list"], usage: "gatehouse keysets list --app KEY",
            summary: "List an app's keysets (secrets masked).", valueOptions: ["app"], positionals: 0...0),
        CommandSpec(
            words: ["keysets", "delete"], usage: "gatehouse keysets delete --app KEY --provider ID",
            summary: "Remove an app's keyset for a provider.", valueOptions: ["app", "provider"], positionals: 0...0),
        CommandSpec(
            words: ["providers", "list"], usage: "gatehouse providers list", summary: "List the providers available.",
            valueOptions: [], positionals: 0...0),
        CommandSpec(
            words: ["providers", "show"], usage: "gatehouse providers show ID", summary: "Print a provider definition.",
            valueOptions: [], positionals: 1...1),
        CommandSpec(
            words: ["providers", "validate"], usage: "gatehouse providers validate [PATH ...]",
            summary: "Check provider definitions (catalogue folders, provider folders or files); one line per defect, exit 1 if any.",
            valueOptions: [], positionals: 0...64),
    ]

    static let settingsHelp = """
        Settings (flag > environment > config file > default):
          --config FILE          JSON file with the settings below (keys: listen, public_url, store, ...)
          --listen HOST:PORT     GATEHOUSE_LISTEN          default 127.0.0.1:6284
          --public-url URL       GATEHOUSE_PUBLIC_URL      default http://HOST:PORT of --listen (localhost if loopback)
          --store LOCATION       GATEHOUSE_STORE           default sqlite:./data/gatehouse.db (or memory:, redis://HOST:PORT/DB)
          --providers DIR        GATEHOUSE_PROVIDERS       adds to the built-in catalogue (later wins by id); repeatable, ':'-separated in the environment
          --builtin-providers on|off GATEHOUSE_BUILTIN_PROVIDERS  off serves only the --providers directories (on)
          --admin-token TOKEN    GATEHOUSE_ADMIN_TOKEN     enables /api/admin/* (at least 16 characters; shows in ps)
          --admin-token-file PATH GATEHOUSE_ADMIN_TOKEN_FILE  the same, read from a file (preferred)
          --master-key BASE64    GATEHOUSE_MASTER_KEY      32 bytes sealing secrets at rest; default: DATA_DIR/master.key
          --log-level LEVEL      GATEHOUSE_LOG_LEVEL       trace, debug, info, notice, warning, error, critical
          --log-format FORMAT    GATEHOUSE_LOG_FORMAT      text or json (default: text on a terminal, else json)
          --state-ttl SECONDS    GATEHOUSE_STATE_TTL       how long a started login waits for the provider (1200)
          --code-ttl SECONDS     GATEHOUSE_CODE_TTL        how long a server-side login's code stays redeemable (600)
          --upstream-timeout SECONDS GATEHOUSE_UPSTREAM_TIMEOUT  deadline of one /request or me call to a provider (15)
          --max-header-bytes BYTES GATEHOUSE_MAX_HEADER_BYTES  request line and headers of one request, 8192 to 262144 (16384)
          --rate-limit-app RULE  GATEHOUSE_RATE_LIMIT_APP  secret-free sign-ins per app: N/s, N/min, N/h or off (20/s)
          --rate-limit-address RULE GATEHOUSE_RATE_LIMIT_ADDRESS  the same per client address (30/min)
          --trusted-proxies LIST GATEHOUSE_TRUSTED_PROXIES addresses or blocks whose X-Forwarded-For is believed
          --json                 machine-readable output
        """

    static var overview: String {
        var text = "Gatehouse: a self-hosted OAuth aggregation gateway.\n\nCommands:\n"
        for spec in all {
            let words = spec.words.joined(separator: " ")
            text += "  " + words + String(repeating: " ", count: max(2, 24 - words.count)) + spec.summary + "\n"
        }
        return text + "\n" + settingsHelp
            + "\n\nRun 'gatehouse COMMAND --help' for a command's usage, 'gatehouse --version' for the release."
    }

    /// The verbs of one command group (`apps`, `keysets`, `providers`) with their usage.
    static func groupHelp(_ group: String) -> String {
        var text = "Commands of 'gatehouse \(group)':\n"
        for spec in all where spec.words[0] == group {
            text += "  " + spec.usage + "\n      " + spec.summary + "\n"
        }
        return text + "\nRun 'gatehouse \(group) VERB --help' for one verb's usage and the settings."
    }

    var help: String {
        "Usage: \(usage)\n\n\(summary)\n\n\(Self.settingsHelp)"
    }
}
