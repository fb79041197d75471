internal import GatehouseCore
internal import HTTPServer

/// Resolves each setting from flag, then environment, then the JSON config file, then the
/// default (interface.md §1), and validates the result once.
struct ConfigurationLoader {
    /// Raw setting names as they appear in config files; flags are `--` plus the same name
    /// with `_` as `-`, environment variables `GATEHOUSE_` plus the upper-cased name.
    static let settingNames = [
        "listen", "public_url", "store", "providers", "admin_token", "master_key", "log_level", "log_format",
        "state_ttl", "code_ttl", "upstream_timeout", "max_header_bytes", "admin_token_file", "rate_limit_app",
        "rate_limit_address", "trusted_proxies", "builtin_providers",
    ]

    /// Settings that are counts; a config file may write them as JSON numbers.
    static let numericSettings: Set<String> = ["state_ttl", "code_ttl", "upstream_timeout", "max_header_bytes"]

    let flags: [String: [String]]
    let environment: [String: String]

    func load() throws(ConfigurationError) -> GatehouseConfiguration {
        let file = try loadFile()
        func value(_ name: String) -> String? {
            if let flag = flags[Self.flagName(name)]?.last { return flag }
            if let env = environment[Self.environmentName(name)], !env.isEmpty { return env }
            return file[name]?.first
        }
        let listenText = value("listen") ?? "127.0.0.1:6284"
        guard let listen = ListenAddress(listenText) else {
            throw ConfigurationError(
                "invalid listen address '\(listenText)': expected HOST:PORT with a numeric IPv4 host, [IPv6] or localhost, e.g. 127.0.0.1:6284"
            )
        }
        let publicURL = try Self.validatePublicURL(value("public_url") ?? Self.defaultPublicURL(listen))
        let storeText = value("store") ?? "sqlite:./data/gatehouse.db"
        guard let store = StoreLocation(storeText) else {
            throw ConfigurationError("invalid store '\(storeText)': expected memory:, sqlite:PATH or redis://HOST:PORT/DB")
        }
        let builtinText = value("builtin_providers") ?? "on"
        guard builtinText == "on" || builtinText == "off" else {
            throw ConfigurationError("invalid builtin_providers '\(builtinText)': expected on or off")
        }
        let directories = try providerDirectories(file: file, builtin: builtinText == "on")
        var adminToken = value("admin_token")
        if let path = value("admin_token_file") {
            guard adminToken == nil else {
                throw ConfigurationError("give the admin token once: --admin-token or --admin-token-file, not both")
            }
            guard let bytes = FileSystem.read(path, limit: 4096), let text = String(validating: bytes, as: UTF8.self) else {
                throw ConfigurationError("cannot read the admin token file '\(path)'")
            }
            adminToken = text.trimmingWhitespace()
        }
        if let adminToken {
            guard adminToken.utf8.count >= 16, adminToken.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw ConfigurationError("invalid admin token: use at least 16 printable characters without spaces")
            }
        }
        var masterKey: [UInt8]?
        if let keyText = value("master_key") {
            guard let decoded = Base64.decode(keyText.trimmingWhitespace()), decoded.count == 32 else {
                throw ConfigurationError("invalid master key: expected 32 bytes in base64 (openssl rand -base64 32)")
            }
            masterKey = decoded
        }
        let levelText = value("log_level") ?? "info"
        guard let level = Logger.Level(rawValue: levelText) else {
            let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
            throw ConfigurationError("invalid log level '\(levelText)': expected one of \(names)")
        }
        var format = StreamLogHandler.defaultFormat
        if let formatText = value("log_format") {
            guard let parsed = StreamLogHandler.Format(rawValue: formatText) else {
                throw ConfigurationError("invalid log format '\(formatText)': expected text or json")
            }
            format = parsed
        }
        let stateTTL = try Self.count(value("state_ttl"), name: "state TTL", default: 1200)
        let codeTTL = try Self.count(value("code_ttl"), name: "code TTL", default: 600)
        let upstreamTimeout = try Self.count(value("upstream_timeout"), name: "upstream timeout", default: 15)
        // From 8 KiB, below which a browser's ordinary cookies (libmicrohttpd counts them twice)
        // may not fit, to 256 KiB: every open connection holds this much and a little more.
        let maxHeaderBytes = try Self.count(
            value("max_header_bytes"), name: "max header bytes", default: HTTPServer.Configuration.defaultMaxHeaderBytes,
            range: 8192...262_144, unit: "a byte count")
        let rateLimitApp = try Self.bucketRule(value("rate_limit_app"), name: "rate_limit_app", default: GatehouseConfiguration.defaultRateLimitApp)
        let rateLimitAddress = try Self.bucketRule(
            value("rate_limit_address"), name: "rate_limit_address", default: GatehouseConfiguration.defaultRateLimitAddress)
        var trustedProxies: [AddressRange] = []
        for item in (value("trusted_proxies") ?? "").split(whereSeparator: { $0 == "," || $0 == " " }) {
            guard let range = AddressRange(String(item)) else {
                throw ConfigurationError("invalid trusted proxy '\(item)': expected an IP address or a block such as 10.0.0.0/8")
            }
            trustedProxies.append(range)
        }
        return GatehouseConfiguration(
            listen: listen, publicURL: publicURL, store: store, providerDirectories: directories,
            adminToken: adminToken, masterKey: masterKey, logLevel: level, logFormat: format, stateTTL: stateTTL,
            codeTTL: codeTTL, upstreamTimeout: upstreamTimeout, maxHeaderBytes: maxHeaderBytes, rateLimitApp: rateLimitApp,
            rateLimitAddress: rateLimitAddress, trustedProxies: trustedProxies)
    }

    /// Without a `public_url`, the address the gateway listens on. A loopback or wildcard
    /// address becomes `localhost` (a wildcard names no host a browser can reach, and
    /// `localhost` is the name the README's tour and most providers' test apps use).
    static func defaultPublicURL(_ listen: ListenAddress) -> String {
        let local = ["0.0.0.0", "::", "127.0.0.1", "::1", "localhost"].contains(listen.host)
        return "http://" + (local ? "localhost:\(listen.port)" : listen.description)
    }

    /// The built-in catalogue first (unless `builtin` is off), then the configured directories,
    /// whose providers add to it or replace it by id.
    private func providerDirectories(file: [String: [String]], builtin: Bool) throws(ConfigurationError) -> [String] {
        var chosen: [String] = []
        if let fromFlags = flags["providers"], !fromFlags.isEmpty {
            chosen = fromFlags
        } else if let fromEnvironment = environment["GATEHOUSE_PROVIDERS"], !fromEnvironment.isEmpty {
            chosen = fromEnvironment.split(separator: ":").map(String.init)
        } else if let fromFile = file["providers"] {
            chosen = fromFile
        }
        for directory in chosen where !FileSystem.isDirectory(directory) {
            throw ConfigurationError("invalid providers directory '\(directory)': not a directory")
        }
        guard builtin else {
            guard !chosen.isEmpty else {
                throw ConfigurationError("builtin_providers is off and no --providers DIR is given: there would be no provider")
            }
            return chosen
        }
        guard let builtinDirectory = FileSystem.builtinProvidersDirectory() else {
            throw ConfigurationError(
                "cannot find the built-in providers directory (share/gatehouse/providers beside the binary): "
                    + "install it, or pass --builtin-providers off with --providers DIR")
        }
        // The image names the built-in directory itself; reading it twice would change nothing.
        let builtinPath = FileSystem.canonicalPath(builtinDirectory)
        return [builtinDirectory] + chosen.filter { FileSystem.canonicalPath($0) != builtinPath }
    }

    /// Reads `--config FILE`: a JSON object whose keys are setting names.
    private func loadFile() throws(ConfigurationError) -> [String: [String]] {
        guard let path = flags["config"]?.last ?? environment["GATEHOUSE_CONFIG"].flatMap({ $0.isEmpty ? nil : $0 })
        else { return [:] }
        guard let bytes = FileSystem.read(path) else {
            throw ConfigurationError("cannot read config file '\(path)'")
        }
        guard let document = JSONValue.parse(bytes), let object = document.objectValue else {
            throw ConfigurationError("config file '\(path)' is not a JSON object")
        }
        var settings: [String: [String]] = [:]
        for (key, value) in object {
            guard Self.settingNames.contains(key) else {
                throw ConfigurationError(
                    "config file '\(path)': unknown key '\(key)' (known: \(Self.settingNames.joined(separator: ", ")))")
            }
            switch value {
            case .string(let text):
                settings[key] = [text]
            case .number where Self.numericSettings.contains(key):
                // A count reads as its JSON text (an integer's digits); the setting's own check
                // then refuses a fraction or a value out of range as it would the same text.
                settings[key] = [value.jsonText]
            case .array(let items) where key == "providers":
                let texts = items.compactMap(\.stringValue)
                guard texts.count == items.count else {
                    throw ConfigurationError("config file '\(path)': 'providers' must be a list of directory paths")
                }
                settings[key] = texts
            default:
                let kind = Self.numericSettings.contains(key) ? "a number" : "a string"
                throw ConfigurationError("config file '\(path)': '\(key)' must be \(kind)")
            }
        }
        return settings
    }

    /// A whole number within `range`; seconds unless `unit` says otherwise.
    static func count(
        _ text: String?, name: String, default fallback: Int, range: ClosedRange<Int> = 1...86_400, unit: String = "whole seconds"
    ) throws(ConfigurationError) -> Int {
        guard let text else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw ConfigurationError("invalid \(name) '\(text)': expected \(unit) from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// `N/s`, `N/min` or `N/h`: up to N at once, N more over each unit; `off` for none.
    static func bucketRule(_ text: String?, name: String, default fallback: BucketRule) throws(ConfigurationError) -> BucketRule? {
        guard let text else { return fallback }
        if text == "off" { return nil }
        let parts = text.split(separator: "/", maxSplits: 1)
        let units: [Substring: Double] = ["s": 1, "min": 60, "h": 3600]
        guard parts.count == 2, let count = Int(parts[0]), (1...1_000_000).contains(count), let seconds = units[parts[1]] else {
            throw ConfigurationError("invalid \(name) '\(text)': expected N/s, N/min or N/h (N from 1 to 1000000), or off")
        }
        return BucketRule(capacity: count, perSecond: Double(count) / seconds)
    }

    static func flagName(_ setting: String) -> String {
        setting.replacing("_", with: "-")
    }

    static func environmentName(_ setting: String) -> String {
        "GATEHOUSE_" + setting.uppercased()
    }

    static func validatePublicURL(_ text: String) throws(ConfigurationError) -> String {
        var trimmed = text
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        let scheme: String
        if trimmed.hasPrefix("https://") {
            scheme = "https://"
        } else if trimmed.hasPrefix("http://") {
            scheme = "http://"
        } else {
            throw ConfigurationError("invalid public URL '\(text)': expected http:// or https:// followed by a host")
        }
        let rest = trimmed.dropFirst(scheme.count)
        let host = rest.prefix { $0 != "/" }
        let allowed = rest.allSatisfy { $0.isASCII && !$0.isWhitespace && $0 != "?" && $0 != "#" && $0 != "\"" && $0 != "<" && $0 != ">" }
        guard !host.isEmpty, allowed else {
            throw ConfigurationError("invalid public URL '\(text)': expected http:// or https:// followed by a host, without query or fragment")
        }
        return trimmed
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var slice = Substring(self)
        while slice.first?.isWhitespace == true { slice = slice.dropFirst() }
        while slice.last?.isWhitespace == true { slice = slice.dropLast() }
        return String(slice)
    }
}
