internal import GatehouseCore

/// `gatehouse providers …`.
enum ProviderCommands {
    static func run(_ command: ParsedCommand, catalog: ProviderCatalog) -> Int32 {
        switch command.spec.words[1] {
        case "list":
            if command.json {
                Console.json(catalog.all.map { ["id": $0.id, "name": $0.name] })
            } else {
                Console.table(["ID", "NAME"], catalog.all.map { [$0.id, $0.name] })
            }
            return 0
        default:  // show
            guard let entry = catalog.entry(command.positionals[0]), let bytes = FileSystem.read(entry.path),
                let document = try? JSONCoding.decode(JSONValue.self, from: bytes)
            else {
                Console.err("gatehouse: no provider '\(command.positionals[0])'")
                return 1
            }
            Console.json(document)
            return 0
        }
    }

    static func validate(_ command: ParsedCommand, configuration: GatehouseConfiguration) -> Int32 {
        let directories = command.positionals.isEmpty ? configuration.providerDirectories : command.positionals
        let defects = ProviderCatalog.validate(directories: directories)
        for defect in defects { Console.err(defect) }
        if defects.isEmpty, !command.json { Console.out("ok: \(directories.joined(separator: ", "))") }
        if command.json { Console.json(["defects": defects]) }
        return defects.isEmpty ? 0 : 1
    }
}
