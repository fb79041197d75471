internal import GatehouseCore

/// What a login produced, in OAuth.io's message shape:
/// `{"status":"success","data":{…},"state":…,"provider":…}` or the JSend error form.
struct LoginOutcome: Sendable {
    enum Status: String, Sendable {
        case success, error, fail
    }

    var status: Status
    var data: JSONValue
    var message: String?
    var clientState: String?
    var provider: String

    static func success(_ data: [String: JSONValue], state: String?, provider: String) -> LoginOutcome {
        LoginOutcome(status: .success, data: .object(data), message: nil, clientState: state, provider: provider)
    }

    /// An error whose text is ours (never a secret) and whose data, if any, is the
    /// provider's own error fields.
    static func error(_ message: String, data: JSONValue = .null, state: String?, provider: String) -> LoginOutcome {
        LoginOutcome(status: .error, data: data, message: message, clientState: state, provider: provider)
    }

    /// The JSON text the SDKs parse, as UTF-8.
    var json: [UInt8] {
        var object: [String: JSONValue] = ["status": .string(status.rawValue), "provider": .string(provider.lowercased())]
        if status == .success {
            object["data"] = data
        } else {
            object["message"] = .string(message ?? "error")
            if data != .null { object["data"] = data }
        }
        object["state"] = clientState.map(JSONValue.string) ?? .null
        return JSONValue.object(object).serialized()
    }
}
