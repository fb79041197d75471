internal import GatehouseCore
internal import GatehouseCrypto

/// Why an app or keyset operation failed, with the HTTP status and error code it maps to.
/// `reason` is safe to show the caller; `detail` is for logs only.
struct RegistryError: Error, Sendable, CustomStringConvertible {
    enum Code: String, Sendable {
        case notFound = "not_found"
        case invalidInput = "invalid_request"
        case unavailable = "store_unavailable"
        case internalFailure = "server_error"
    }

    let code: Code
    let reason: String
    let detail: String

    static func notFound(_ reason: String) -> RegistryError { RegistryError(code: .notFound, reason: reason, detail: "") }
    static func invalid(_ reason: String) -> RegistryError { RegistryError(code: .invalidInput, reason: reason, detail: "") }

    static func store(_ error: StoreError) -> RegistryError {
        if error.isUnavailable {
            return RegistryError(code: .unavailable, reason: "the store is unavailable", detail: error.description)
        }
        return RegistryError(code: .internalFailure, reason: "internal error", detail: error.description)
    }

    static func crypto(_ error: CryptoError) -> RegistryError {
        RegistryError(code: .internalFailure, reason: "internal error", detail: error.description)
    }

    var status: Int {
        switch code {
        case .notFound: 404
        case .invalidInput: 400
        case .unavailable: 503
        case .internalFailure: 500
        }
    }

    var description: String { detail.isEmpty ? reason : "\(reason) (\(detail))" }
}
