internal import GatehouseCore

/// `gatehouse apps …` and `gatehouse keysets …`: the same operations as the admin API,
/// run directly against the store.
enum AppCommands {
    static func run(_ command: ParsedCommand, registry: AppRegistry) async -> Int32 {
        do throws(RegistryError) {
            switch command.spec.words[1] {
            case "create":
                guard let name = command.value("name") else {
                    Console.err("gatehouse: apps create needs --name")
                    return 2
                }
                let app = try await registry.createApp(name: name, domains: command.values("domain"))
                if command.json {
                    Console.json(AppView(app, includeSecret: true))
                } else {
                    Console.out("key: \(app.key)\nsecret: \(app.secret)\nname: \(app.name)\ndomains: \(app.domains.joined(separator: ", "))")
                }
            case "list":
                let apps = try await registry.apps()
                if command.json {
                    Console.json(apps.map { AppView($0, includeSecret: false) })
                } else {
                    Console.table(["KEY", "NAME", "DOMAINS"], apps.map { [$0.key, $0.name, $0.domains.joined(separator: ",")] })
                }
            case "show":
                let key = command.positionals[0]
                let app = try await registry.app(key: key)
                let keysets = try await registry.keysets(appKey: key)
                if command.json {
                    Console.json(AppView(app, includeSecret: true, keysets: keysets))
                } else {
                    Console.out(
                        "key: \(app.key)\nsecret: \(app.secret)\nname: \(app.name)\ndomains: \(app.domains.joined(separator: ", "))\n"
                            + "keysets: \(keysets.map(\.provider).joined(separator: ", "))")
                }
            case "delete":
                try await registry.deleteApp(key: command.positionals[0])
                if command.json { Console.json(["deleted": command.positionals[0]]) } else { Console.out("deleted") }
            default:  // rotate-secret
                let app = try await registry.updateApp(key: command.positionals[0], name: nil, domains: nil, rotateSecret: true)
                if command.json { Console.json(AppView(app, includeSecret: true)) } else { Console.out("secret: \(app.secret)") }
            }
            return 0
        } catch {
            return report(error)
        }
    }

    static func report(_ error: RegistryError) -> Int32 {
        Console.err("gatehouse: \(error.reason)")
        return error.code == .invalidInput ? 2 : 1
    }
}

enum KeysetCommands {
    static func run(_ command: ParsedCommand, registry: AppRegistry) async -> Int32 {
        guard let appKey = command.value("app") else {
            Console.err("gatehouse: keysets \(command.spec.words[1]) needs --app KEY")
            return 2
        }
        do throws(RegistryError) {
            switch command.spec.words[1] {
            case "set":
                guard let provider = command.value("provider") else {
                    Console.err("gatehouse: keysets set needs --provider ID")
                    return 2
                }
                guard let type = ResponseType(rawValue: command.value("response-type") ?? "both") else {
                    Console.err("gatehouse: --response-type must be token, code or both")
                    return 2
                }
                let deviceText = command.value("device-sign-in") ?? "on"
                guard deviceText == "on" || deviceText == "off" else {
                    Console.err("gatehouse: --device-sign-in must be on or off")
                    return 2
                }
                var pairs = command.values("param")
                // Keys are files: a PEM's lines do not survive a command line well.
                for pair in command.values("param-file") {
                    guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                        Console.err("gatehouse: --param-file takes NAME=PATH")
                        return 2
                    }
                    let path = String(pair[pair.index(after: equals)...])
                    guard let bytes = FileSystem.read(path, limit: 1 << 20), let text = String(validating: bytes, as: UTF8.self) else {
                        Console.err("gatehouse: cannot read \(path) (a UTF-8 file of at most 1 MiB) for --param-file")
                        return 2
                    }
                    pairs.append(String(pair[..<equals]) + "=" + text)
                }
                guard let parameters = parseParameters(pairs) else {
                    Console.err("gatehouse: --param takes NAME=VALUE")
                    return 2
                }
                _ = try await registry.app(key: appKey)
                let keyset = try await registry.setKeyset(
                    appKey: appKey, provider: provider, parameters: parameters, responseType: type, deviceSignIn: deviceText == "on")
                if command.json { Console.json(KeysetView(keyset)) } else { Console.out("keyset \(provider) set") }
            case "list":
                let keysets = try await registry.keysets(appKey: appKey)
                if command.json {
                    Console.json(keysets.map(KeysetView.init))
                } else {
                    Console.table(
                        ["PROVIDER", "RESPONSE_TYPE", "PARAMETERS"],
                        keysets.map { keyset in
                            let view = KeysetView(keyset)
                            let parameters = view.parameters.keys.sorted().map { name in
                                "\(name)=\(display(view.parameters[name]))"
                            }
                            return [keyset.provider, keyset.responseType.rawValue, parameters.joined(separator: " ")]
                        })
                }
            default:  // delete
                guard let provider = command.value("provider") else {
                    Console.err("gatehouse: keysets delete needs --provider ID")
                    return 2
                }
                try await registry.deleteKeyset(appKey: appKey, provider: provider)
                if command.json { Console.json(["deleted": provider]) } else { Console.out("deleted") }
            }
            return 0
        } catch {
            return AppCommands.report(error)
        }
    }

    /// `NAME=VALUE` pairs; a name given twice becomes a list, as scopes usually are.
    static func parseParameters(_ pairs: [String]) -> JSONObject? {
        var result: JSONObject = [:]
        for pair in pairs {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else { return nil }
            let name = String(pair[..<equals])
            let value = JSONValue.string(String(pair[pair.index(after: equals)...]))
            switch result[name] {
            case nil: result[name] = value
            case .array(let items)?: result[name] = .array(items + [value])
            case let existing?: result[name] = .array([existing, value])
            }
        }
        return result
    }

    private static func display(_ value: JSONValue?) -> String {
        switch value {
        case .string(let text)?: text
        case .array(let items)?: items.compactMap(\.stringValue).joined(separator: ",")
        default: ""
        }
    }
}
