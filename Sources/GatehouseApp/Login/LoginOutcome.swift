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

    static func success(_ data: JSONObject, state: String?, provider: String) -> LoginOutcome {
        LoginOutcome(status: .success, data: .object(data), message: nil, clientState: state, provider: provider)
    }

    /// An error whose text is ours (never a secret) and whose data, if any, is the
    /// provider's own error fields.
    static func error(_ message: String, data: JSONValue = .null, state: String?, provider: String) -> LoginOutcome {
        LoginOutcome(status: .error, data: data, message: message, clientState: state, provider: provider)
    }

    /// The JSON text the SDKs parse, as UTF-8.
    var json: [UInt8] {
        var members: [(name: String, value: JSONValue)] = []
        members.reserveCapacity(5)
        members.append(("status", .string(status.rawValue)))
        members.append(("provider", .string(provider.lowercased())))
        members.append(("state", clientState.map(JSONValue.string) ?? .null))
        if status == .success {
            members.append(("data", data))
        } else {
            members.append(("message", .string(message ?? "error")))
            if data != .null { members.append(("data", data)) }
        }
        return JSONValue.serializedObject([:], adding: members)
    }
}
