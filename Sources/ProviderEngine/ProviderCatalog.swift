internal import GatehouseCore

/// The provider definitions found in the configured directories: `<dir>/<id>/provider.json`,
/// where a later directory's `<id>` replaces an earlier one's, so a deployment can add or
/// override providers without a rebuild.
public struct ProviderCatalog: Sendable {
    /// A provider and where it was read from.
    public struct Entry: Sendable {
        public let definition: ProviderDefinition
        public let directory: String

        /// The logo file, if the folder has one.
        public var logoPath: String? {
            let candidates = [definition.logo, "logo.png", "logo.svg"].compactMap { $0 }
            return candidates.map { directory + "/" + $0 }.first(where: FileSystem.exists)
        }
    }

    /// One line per defect: `file: /json/pointer: message`.
    public let defects: [String]
    private let entries: [String: Entry]

    /// Reads every provider in `directories`. Defective files are reported in `defects` and
    /// left out of the catalogue.
    public init(directories: [String]) {
        var entries: [String: Entry] = [:]
        var defects: [String] = []
        for directory in directories {
            guard FileSystem.isDirectory(directory) else {
                defects.append("\(directory): not a directory")
                continue
            }
            for id in FileSystem.entries(directory) where FileSystem.isDirectory(directory + "/" + id) {
                let (definition, found) = Self.read(id: id, file: directory + "/" + id + "/provider.json")
                if let definition { entries[id] = Entry(definition: definition, directory: directory + "/" + id) }
                defects += found
            }
        }
        self.entries = entries
        self.defects = defects
    }

    /// The defects of what `path` names, one line each: a catalogue folder (one folder per
    /// provider), one provider's folder (holding `provider.json`), or a definition file, whose
    /// id is its folder's name for `provider.json` and its own name otherwise. A folder that
    /// holds no definition is a defect: pointing a deployment at it would serve nothing.
    public static func defects(at path: String) -> [String] {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        let name = trimmed.split(separator: "/").last.map(String.init) ?? trimmed
        guard FileSystem.isDirectory(trimmed) else {
            guard FileSystem.exists(trimmed) else { return ["\(trimmed): no such file or folder"] }
            let folder = trimmed.split(separator: "/").dropLast().last.map(String.init) ?? "."
            let id = name == "provider.json" ? folder : String(name.split(separator: ".").first ?? "")
            return read(id: id, file: trimmed).defects
        }
        if FileSystem.exists(trimmed + "/provider.json") {
            return read(id: name, file: trimmed + "/provider.json").defects
        }
        let catalogue = ProviderCatalog(directories: [trimmed])
        if catalogue.entries.isEmpty && catalogue.defects.isEmpty {
            return ["\(trimmed): no provider definitions (expected <id>/provider.json folders or a provider.json)"]
        }
        return catalogue.defects
    }

    /// One definition file read as provider `id`: the definition, or the lines saying why not.
    private static func read(id: String, file path: String) -> (definition: ProviderDefinition?, defects: [String]) {
        guard isProviderID(id) else {
            let folder = path.hasSuffix("/provider.json") ? String(path.dropLast("/provider.json".count)) : path
            return (nil, ["\(folder): provider ids are lowercase letters, digits, '_', '-' and '.'"])
        }
        guard let bytes = FileSystem.read(path) else { return (nil, ["\(path): missing or unreadable"]) }
        guard let document = JSONValue.parse(bytes) else { return (nil, ["\(path): not valid JSON"]) }
        switch DefinitionReader.read(id: id, document: document) {
        case .success(let definition): return (definition, [])
        case .failure(let failure): return (nil, failure.defects.map { "\(path): \($0)" })
        }
    }

    /// Every provider, ordered by id.
    public var all: [Entry] { entries.values.sorted { $0.definition.id < $1.definition.id } }

    public func contains(_ id: String) -> Bool { entries[id] != nil }

    public func entry(_ id: String) -> Entry? { entries[id] }

    public func definition(_ id: String) -> ProviderDefinition? { entries[id]?.definition }

    /// Provider ids are lowercase folder names: letters, digits, `_`, `-` and `.`.
    public static func isProviderID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && !text.hasPrefix(".")
            && text.utf8.allSatisfy {
                ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
                    || $0 == UInt8(ascii: ".")
            }
    }
}

