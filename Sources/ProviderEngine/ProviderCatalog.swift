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
                let folder = directory + "/" + id
                let path = folder + "/provider.json"
                guard Self.isProviderID(id) else {
                    defects.append("\(folder): provider ids are lowercase letters, digits, '_', '-' and '.'")
                    continue
                }
                guard let bytes = FileSystem.read(path) else {
                    defects.append("\(path): missing or unreadable")
                    continue
                }
                guard let document = JSONValue.parse(bytes) else {
                    defects.append("\(path): not valid JSON")
                    continue
                }
                switch DefinitionReader.read(id: id, document: document) {
                case .success(let definition):
                    entries[id] = Entry(definition: definition, directory: folder)
                case .failure(let failure):
                    defects += failure.defects.map { "\(path): \($0)" }
                }
            }
        }
        self.entries = entries
        self.defects = defects
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
