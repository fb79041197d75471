internal import GatehouseCore
internal import ProviderEngine

/// An app as the admin API and `--json` CLI output show it.
struct AppView: Encodable, Sendable {
    let key: String
    let name: String
    let secret: String?
    let domains: [String]
    let createdAt: Int64
    let keysets: [KeysetView]?

    init(_ app: App, includeSecret: Bool, keysets: [Keyset]? = nil) {
        key = app.key
        name = app.name
        secret = includeSecret ? app.secret : nil
        domains = app.domains
        createdAt = app.createdAt
        self.keysets = keysets?.map(KeysetView.init)
    }

    enum CodingKeys: String, CodingKey {
        case key, name, secret, domains, keysets
        case createdAt = "created_at"
    }
}

/// A keyset for display: parameters whose names suggest a secret are masked, since a
/// listing is the most likely place for a secret to be copied somewhere it should not go.
struct KeysetView: Encodable, Sendable {
    let provider: String
    let parameters: JSONObject
    let responseType: ResponseType
    let updatedAt: Int64
    let deviceSignIn: Bool

    static let mask = "********"

    init(_ keyset: Keyset) {
        provider = keyset.provider
        responseType = keyset.responseType
        updatedAt = keyset.updatedAt
        deviceSignIn = keyset.deviceSignIn
        var shown: JSONObject = [:]
        for (name, value) in keyset.parameters {
            shown[name] = Self.isSecret(name) ? .string(Self.mask) : value
        }
        parameters = shown
    }

    static func isSecret(_ name: String) -> Bool {
        Parameter.namesSecret(name)
    }

    enum CodingKeys: String, CodingKey {
        case provider, parameters
        case responseType = "response_type"
        case updatedAt = "updated_at"
        case deviceSignIn = "device_sign_in"
    }
}
