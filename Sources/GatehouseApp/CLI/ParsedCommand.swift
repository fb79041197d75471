/// A command line split into the command, its positionals and its options.
struct ParsedCommand: Sendable {
    let spec: CommandSpec
    let positionals: [String]
    let options: [String: [String]]
    let flags: Set<String>

    var json: Bool { flags.contains("json") }
    var wantsHelp: Bool { flags.contains("help") }

    func value(_ name: String) -> String? { options[name]?.last }
    func values(_ name: String) -> [String] { options[name] ?? [] }

    /// What the parser found instead of a command.
    enum Outcome: Sendable {
        case command(ParsedCommand)
        case overview
        case version
        /// A mistake in the command line: the message, then the usage that fits (stderr, exit 2).
        case usageError(String, usage: String)
        /// `gatehouse apps --help`: the verbs of one command group.
        case groupHelp(String)
    }

    static func parse(_ arguments: [String]) -> Outcome {
        var words: [String] = []
        var options: [String: [String]] = [:]
        var flags: Set<String> = []
        var index = 0
        var pendingOptions: [(String, String?)] = []
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" {
                words.append(contentsOf: arguments[index...])
                break
            }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                if argument == "-h" {
                    flags.insert("help")
                } else {
                    words.append(argument)
                }
                continue
            }
            let body = argument.dropFirst(2)
            if let equals = body.firstIndex(of: "=") {
                pendingOptions.append((String(body[..<equals]), String(body[body.index(after: equals)...])))
            } else {
                let name = String(body)
                if CommandSpec.globalFlags.contains(name) {
                    flags.insert(name)
                } else if index < arguments.count {
                    pendingOptions.append((name, arguments[index]))
                    index += 1
                } else {
                    pendingOptions.append((name, nil))
                }
            }
        }
        if flags.contains("version"), !flags.contains("help") { return .version }
        let spec = CommandSpec.all
            .filter { words.starts(with: $0.words) }
            .max { $0.words.count < $1.words.count }
        guard let spec else {
            if words.isEmpty {
                // `gatehouse --bogus` is a mistake, not a request for the overview.
                if let (name, _) = pendingOptions.first(where: { !CommandSpec.globalValueOptions.contains($0.0) }) {
                    return .usageError("unknown option --\(name)", usage: CommandSpec.overview)
                }
                return .overview
            }
            let known = Set(CommandSpec.all.map { $0.words[0] })
            if known.contains(words[0]) {
                if words.count == 1, flags.contains("help") { return .groupHelp(words[0]) }
                let verbs = CommandSpec.all.filter { $0.words[0] == words[0] }.compactMap { $0.words.dropFirst().first }
                return .usageError(
                    "unknown '\(words[0])' command '\(words.dropFirst().first ?? "")'; expected one of: \(verbs.joined(separator: ", "))",
                    usage: CommandSpec.groupHelp(words[0]))
            }
            return .usageError("unknown command '\(words[0])'", usage: CommandSpec.overview)
        }
        for (name, value) in pendingOptions {
            guard CommandSpec.globalValueOptions.contains(name) || spec.valueOptions.contains(name) else {
                return .usageError("unknown option --\(name) for '\(spec.words.joined(separator: " "))'", usage: spec.help)
            }
            guard let value else { return .usageError("option --\(name) needs a value", usage: spec.help) }
            options[name, default: []].append(value)
        }
        let positionals = Array(words.dropFirst(spec.words.count))
        let command = ParsedCommand(spec: spec, positionals: positionals, options: options, flags: flags)
        if !command.wantsHelp, !spec.positionals.contains(positionals.count) {
            return .usageError("wrong number of arguments for '\(spec.words.joined(separator: " "))'", usage: spec.help)
        }
        return .command(command)
    }
}
