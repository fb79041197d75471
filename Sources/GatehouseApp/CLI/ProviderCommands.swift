internal import GatehouseCore
internal import ProviderEngine

/// `gatehouse providers …`.
enum ProviderCommands {
    static func run(_ command: ParsedCommand, catalog: ProviderCatalog) -> Int32 {
        switch command.spec.words[1] {
        case "list":
            if command.json {
                Console.json(catalog.all.map { ["id": $0.definition.id, "name": $0.definition.name] })
            } else {
                Console.table(["ID", "NAME"], catalog.all.map { [$0.definition.id, $0.definition.name] })
            }
            return 0
        default:  // show
            guard let definition = catalog.definition(command.positionals[0]) else {
                Console.err("gatehouse: no provider '\(command.positionals[0])'")
                return 1
            }
            Console.json(definition.document)
            return 0
        }
    }

    static func validate(_ command: ParsedCommand, configuration: GatehouseConfiguration) -> Int32 {
        // Without arguments, the stack `serve` would read.
        let directories = command.positionals.isEmpty ? configuration.providerDirectories : command.positionals
        let defects = directories.flatMap(ProviderCatalog.defects(at:))
        for defect in defects { Console.err(defect) }
        if defects.isEmpty, !command.json { Console.out("ok: \(directories.joined(separator: ", "))") }
        if command.json { Console.json(["defects": defects]) }
        return defects.isEmpty ? 0 : 1
    }
}
