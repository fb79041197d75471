internal import GatehouseCore
internal import GatehouseCrypto

/// Finds the key that seals secrets at rest: the configured one, or for the embedded store a
/// `master.key` file beside the database, created on first use with mode 0600.
enum MasterKey {
    static let fileName = "master.key"

    /// `create`: false for a command that only reads, which must leave no key file behind.
    static func resolve(configured: [UInt8]?, store: StoreLocation, create: Bool = true) throws(ConfigurationError) -> [UInt8] {
        if let configured { return configured }
        switch store {
        case .memory:
            // Nothing outlives the process, so neither need the key.
            guard let key = try? SecureRandom.bytes(SecretBox.keyLength) else {
                throw ConfigurationError("cannot generate a master key: the system random generator failed")
            }
            return key
        case .redis:
            throw ConfigurationError(
                "a master key is required with the redis store: set --master-key or GATEHOUSE_MASTER_KEY (openssl rand -base64 32)")
        case .sqlite(let path):
            let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
            let folder = directory.isEmpty ? "/" : directory
            if !create {
                guard let key = try read(folder + "/" + fileName) else {
                    throw ConfigurationError("no master key at '\(folder)/\(fileName)' beside the database: give --master-key")
                }
                return key
            }
            return try loadOrCreate(in: folder)
        }
    }

    private static func loadOrCreate(in directory: String) throws(ConfigurationError) -> [UInt8] {
        let path = directory + "/" + fileName
        if let key = try read(path) { return key }
        guard FileSystem.makeDirectories(directory) else {
            throw ConfigurationError("cannot create the data directory '\(directory)'")
        }
        guard let fresh = try? SecureRandom.bytes(SecretBox.keyLength) else {
            throw ConfigurationError("cannot generate a master key: the system random generator failed")
        }
        if FileSystem.createExclusively(path, bytes: Array((Base64.encode(fresh) + "\n").utf8), mode: 0o600) {
            return fresh
        }
        // Another process created it first; use theirs.
        if let key = try read(path) { return key }
        throw ConfigurationError("cannot create the master key file '\(path)'")
    }

    private static func read(_ path: String) throws(ConfigurationError) -> [UInt8]? {
        guard FileSystem.exists(path) else { return nil }
        guard let bytes = FileSystem.read(path, limit: 1024) else {
            throw ConfigurationError("cannot read the master key file '\(path)'")
        }
        let text = String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
        guard let key = Base64.decode(text), key.count == SecretBox.keyLength else {
            throw ConfigurationError("the master key file '\(path)' does not hold 32 base64 bytes")
        }
        return key
    }
}
