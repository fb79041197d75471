internal import GatehouseCore
internal import ProviderEngine
internal import GatehouseCrypto

/// Apps and keysets as callers see them: validates input, generates keys and secrets, and
/// seals every secret before it reaches the store.
struct AppRegistry: Sendable {
    let store: any Store
    let box: SecretBox
    let providers: ProviderCatalog
    let cache = RegistryCache()

    static let maxNameLength = 200
    static let maxDomains = 100
    static let maxParameters = 64
    static let maxParameterBytes = 16 << 10

    // MARK: Apps

    func createApp(name: String, domains: [String]) async throws(RegistryError) -> App {
        let name = try Self.validName(name)
        let domains = try Self.validDomains(domains)
        for _ in 0..<3 {
            let app = App(key: try identifier(), name: name, secret: try identifier(), domains: domains, createdAt: Timestamp.now())
            let row = try sealed(app)
            do throws(StoreError) {
                try await store.createApp(row)
                return app
            } catch where error.isConflict {
                continue  // a 160-bit collision; draw again
            } catch {
                throw .store(error)
            }
        }
        throw .invalid("could not allocate an app key")
    }

    func apps() async throws(RegistryError) -> [App] {
        let rows: [StoredApp]
        do { rows = try await store.apps() } catch { throw .store(error) }
        var apps: [App] = []
        for row in rows { apps.append(try opened(row)) }
        return apps
    }

    func app(key: String) async throws(RegistryError) -> App {
        guard Self.isIdentifier(key) else { throw .notFound("no app with this key") }
        if let cached = cache.app(key) { return cached }
        let row: StoredApp?
        do { row = try await store.app(key: key) } catch { throw .store(error) }
        guard let row else { throw .notFound("no app with this key") }
        let app = try opened(row)
        cache.store(app)
        return app
    }

    func updateApp(key: String, name: String?, domains: [String]?, rotateSecret: Bool) async throws(RegistryError) -> App {
        cache.invalidate(app: key)
        var app = try await app(key: key)
        if let name { app.name = try Self.validName(name) }
        if let domains { app.domains = try Self.validDomains(domains) }
        if rotateSecret { app.secret = try identifier() }
        let row = try sealed(app)
        let updated: Bool
        do { updated = try await store.updateApp(row) } catch { throw .store(error) }
        cache.invalidate(app: key)
        guard updated else { throw .notFound("no app with this key") }
        return app
    }

    func deleteApp(key: String) async throws(RegistryError) {
        guard Self.isIdentifier(key) else { throw .notFound("no app with this key") }
        cache.invalidate(app: key)
        let deleted: Bool
        do { deleted = try await store.deleteApp(key: key) } catch { throw .store(error) }
        cache.invalidate(app: key)
        guard deleted else { throw .notFound("no app with this key") }
    }

    /// The app if `secret` is its secret. Compared in constant time; an unknown key and a
    /// wrong secret fail alike.
    func authenticate(key: String, secret: String) async throws(RegistryError) -> App? {
        guard Self.isIdentifier(key) else { return nil }
        let app: App
        do throws(RegistryError) {
            app = try await self.app(key: key)
        } catch where error.code == .notFound {
            return nil
        }
        return ConstantTime.equals(app.secret, secret) ? app : nil
    }

    // MARK: Keysets

    func setKeyset(
        appKey: String, provider: String, parameters: JSONObject, responseType: ResponseType, deviceSignIn: Bool = true
    ) async throws(RegistryError) -> Keyset {
        guard providers.contains(provider) else { throw .invalid("unknown provider '\(provider)'") }
        try Self.validateParameters(parameters)
        let keyset = Keyset(
            provider: provider, parameters: parameters, responseType: responseType, updatedAt: Timestamp.now(), deviceSignIn: deviceSignIn)
        let stored = StoredKeyset(
            provider: provider, sealedParameters: try seal(parameters, context: Self.keysetContext(appKey, provider)),
            responseType: responseType, updatedAt: keyset.updatedAt, deviceSignIn: deviceSignIn)
        cache.invalidate(app: appKey)
        let saved: Bool
        do { saved = try await store.putKeyset(stored, appKey: appKey) } catch { throw .store(error) }
        cache.invalidate(app: appKey)
        guard saved else { throw .notFound("no app with this key") }
        return keyset
    }

    func keysets(appKey: String) async throws(RegistryError) -> [Keyset] {
        _ = try await app(key: appKey)
        let rows: [StoredKeyset]
        do { rows = try await store.keysets(appKey: appKey) } catch { throw .store(error) }
        var keysets: [Keyset] = []
        for row in rows { keysets.append(try opened(row, appKey: appKey)) }
        return keysets
    }

    func keyset(appKey: String, provider: String) async throws(RegistryError) -> Keyset? {
        if let cached = cache.keyset(app: appKey, provider: provider) { return cached }
        let row: StoredKeyset?
        do { row = try await store.keyset(appKey: appKey, provider: provider) } catch { throw .store(error) }
        let keyset = try row.map { row throws(RegistryError) in try opened(row, appKey: appKey) }
        cache.store(keyset, app: appKey, provider: provider)
        return keyset
    }

    func deleteKeyset(appKey: String, provider: String) async throws(RegistryError) {
        cache.invalidate(app: appKey)
        let deleted: Bool
        do { deleted = try await store.deleteKeyset(appKey: appKey, provider: provider) } catch { throw .store(error) }
        cache.invalidate(app: appKey)
        guard deleted else { throw .notFound("no keyset for this app and provider") }
    }

    // MARK: Sealing

    private static func secretContext(_ key: String) -> String { "app-secret:\(key)" }
    private static func keysetContext(_ key: String, _ provider: String) -> String { "keyset:\(key):\(provider)" }

    private func sealed(_ app: App) throws(RegistryError) -> StoredApp {
        let secret: [UInt8]
        do { secret = try box.seal(Array(app.secret.utf8), context: Self.secretContext(app.key)) } catch { throw .crypto(error) }
        return StoredApp(key: app.key, name: app.name, sealedSecret: secret, domains: app.domains, createdAt: app.createdAt)
    }

    private func opened(_ row: StoredApp) throws(RegistryError) -> App {
        let secret: [UInt8]
        do { secret = try box.open(row.sealedSecret, context: Self.secretContext(row.key)) } catch { throw .crypto(error) }
        return App(
            key: row.key, name: row.name, secret: String(decoding: secret, as: UTF8.self), domains: row.domains,
            createdAt: row.createdAt)
    }

    private func seal(_ parameters: JSONObject, context: String) throws(RegistryError) -> [UInt8] {
        let bytes = JSONValue.object(parameters).serialized()
        do { return try box.seal(bytes, context: context) } catch { throw .crypto(error) }
    }

    private func opened(_ row: StoredKeyset, appKey: String) throws(RegistryError) -> Keyset {
        let bytes: [UInt8]
        do { bytes = try box.open(row.sealedParameters, context: Self.keysetContext(appKey, row.provider)) } catch {
            throw .crypto(error)
        }
        guard let parameters = JSONValue.parse(bytes)?.objectValue else {
            throw RegistryError(code: .internalFailure, reason: "internal error", detail: "keyset parameters unreadable")
        }
        return Keyset(
            provider: row.provider, parameters: parameters, responseType: row.responseType, updatedAt: row.updatedAt,
            deviceSignIn: row.deviceSignIn)
    }

    private func identifier() throws(RegistryError) -> String {
        do { return try SecureRandom.identifier() } catch { throw .crypto(error) }
    }

    // MARK: Validation

    /// OAuth.io's id alphabet and length (`^[a-zA-Z0-9\-_]{23,27}$`).
    /// Checked over the contiguous bytes where the string has them (native strings do): every
    /// sign-in checks its app key this way more than once, and walking the `UTF8View` cost more
    /// than the check.
    static func isIdentifier(_ text: String) -> Bool {
        guard (23...27).contains(text.utf8.count) else { return false }
        return text.utf8.withContiguousStorageIfAvailable { $0.allSatisfy(isIdentifierByte) }
            ?? text.utf8.allSatisfy(isIdentifierByte)
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    static func validName(_ name: String) throws(RegistryError) -> String {
        let trimmed = name.trimmingWhitespace()
        guard !trimmed.isEmpty, trimmed.count <= maxNameLength, !trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { throw .invalid("name must be 1 to \(maxNameLength) printable characters") }
        return trimmed
    }

    /// Domains are origins (`https://app.example.com`), hosts (`example.com`, `*.example.com`)
    /// or `localhost`; whitespace, control characters and quotes are refused because these
    /// strings are later compared against browser-supplied origins.
    static func validDomains(_ domains: [String]) throws(RegistryError) -> [String] {
        guard domains.count <= maxDomains else { throw .invalid("at most \(maxDomains) domains") }
        var result: [String] = []
        for domain in domains {
            let trimmed = domain.trimmingWhitespace()
            let forbidden: Set<Character> = ["\"", "'", "<", ">", "\\", "`", " "]
            guard !trimmed.isEmpty, trimmed.utf8.count <= 253,
                trimmed.allSatisfy({ $0.isASCII && !forbidden.contains($0) && !$0.isWhitespace }),
                !trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            else { throw .invalid("invalid domain '\(trimmed.prefix(80))'") }
            if !result.contains(trimmed) { result.append(trimmed) }
        }
        return result
    }

    static func validateParameters(_ parameters: JSONObject) throws(RegistryError) {
        guard parameters.count <= maxParameters else { throw .invalid("at most \(maxParameters) parameters") }
        for (name, value) in parameters {
            guard !name.isEmpty, name.utf8.count <= 64,
                name.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
            else { throw .invalid("invalid parameter name '\(name.prefix(64))'") }
            switch value {
            case .string: break
            case .array(let items) where items.allSatisfy({ $0.stringValue != nil }): break
            default: throw .invalid("parameter '\(name)' must be a string or a list of strings")
            }
        }
        if JSONValue.object(parameters).serialized().count > maxParameterBytes {
            throw .invalid("parameters exceed \(maxParameterBytes) bytes")
        }
    }
}
