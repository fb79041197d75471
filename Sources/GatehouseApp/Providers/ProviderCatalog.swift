internal import GatehouseCore

/// The provider definitions found in the configured directories: `<dir>/<id>/provider.json`,
/// with later directories overriding earlier ones. The full definition format and its
/// validation belong to the login-flow work; this layer knows ids, names and files.
struct ProviderCatalog: Sendable {
    struct Entry: Sendable, Hashable {
        let id: String
        let name: String
        let path: String
    }

    private let entries: [String: Entry]

    init(directories: [String]) {
        var entries: [String: Entry] = [:]
        for directory in directories {
            for id in FileSystem.entries(directory) where Self.isProviderID(id) {
                let path = directory + "/" + id + "/provider.json"
                guard FileSystem.exists(path) else { continue }
                let name = FileSystem.read(path)
                    .flatMap { try? JSONCoding.decode(JSONValue.self, from: $0) }?["name"]?.stringValue ?? id
                entries[id] = Entry(id: id, name: name, path: path)
            }
        }
        self.entries = entries
    }

    /// Every provider, ordered by id.
    var all: [Entry] { entries.values.sorted { $0.id < $1.id } }

    func contains(_ id: String) -> Bool { entries[id] != nil }

    func entry(_ id: String) -> Entry? { entries[id] }

    /// Provider ids are lowercase folder names: letters, digits, `_`, `-` and `.`.
    static func isProviderID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && !text.hasPrefix(".")
            && text.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }

    /// Checks each provider file in `directories`: one line per defect, empty when all is well.
    static func validate(directories: [String]) -> [String] {
        var defects: [String] = []
        for directory in directories {
            guard FileSystem.isDirectory(directory) else {
                defects.append("\(directory): not a directory")
                continue
            }
            for id in FileSystem.entries(directory) where FileSystem.isDirectory(directory + "/" + id) {
                let path = directory + "/" + id + "/provider.json"
                guard isProviderID(id) else {
                    defects.append("\(directory)/\(id): provider ids are lowercase letters, digits, '_', '-' and '.'")
                    continue
                }
                guard let bytes = FileSystem.read(path) else {
                    defects.append("\(path): missing or unreadable")
                    continue
                }
                guard let document = try? JSONCoding.decode(JSONValue.self, from: bytes), let object = document.objectValue else {
                    defects.append("\(path): not a JSON object")
                    continue
                }
                if object["name"]?.stringValue?.isEmpty ?? true {
                    defects.append("\(path): /name: required, a non-empty string")
                }
            }
        }
        return defects
    }
}
