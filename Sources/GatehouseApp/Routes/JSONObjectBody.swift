internal import GatehouseCore
internal import HTTPServer

/// A request body that must be one JSON object with known keys. Unknown keys are refused:
/// a misspelt `domain` silently ignored would leave an app without the whitelist the
/// operator meant to set. The Content-Type is not checked, since `curl -d` labels JSON as a
/// form; the body itself must parse.
struct JSONObjectBody {
    private let fields: JSONObject

    init(_ request: HTTPRequest, allowedKeys: Set<String>) throws(HTTPFailure) {
        guard !request.body.isEmpty else {
            throw HTTPFailure(400, "invalid_request", "a JSON object body is required")
        }
        guard let document = JSONValue.parse(request.body) else {
            throw HTTPFailure(400, "invalid_json", "the body is not valid JSON")
        }
        guard let object = document.objectValue else {
            throw HTTPFailure(400, "invalid_request", "the body must be a JSON object")
        }
        if let unknown = object.keys.sorted().first(where: { !allowedKeys.contains($0) }) {
            throw HTTPFailure(400, "invalid_request", "unknown field '\(unknown.prefix(64))'")
        }
        fields = object
    }

    func string(_ key: String, required: Bool = false) throws(HTTPFailure) -> String? {
        guard let value = fields[key], value != .null else {
            if required { throw HTTPFailure(400, "invalid_request", "'\(key)' is required") }
            return nil
        }
        guard let text = value.stringValue else { throw HTTPFailure(400, "invalid_request", "'\(key)' must be a string") }
        return text
    }

    func strings(_ key: String) throws(HTTPFailure) -> [String]? {
        guard let value = fields[key], value != .null else { return nil }
        guard let items = value.arrayValue else { throw HTTPFailure(400, "invalid_request", "'\(key)' must be a list of strings") }
        let texts = items.compactMap(\.stringValue)
        guard texts.count == items.count else { throw HTTPFailure(400, "invalid_request", "'\(key)' must be a list of strings") }
        return texts
    }

    func bool(_ key: String) throws(HTTPFailure) -> Bool? {
        guard let value = fields[key], value != .null else { return nil }
        guard let flag = value.boolValue else { throw HTTPFailure(400, "invalid_request", "'\(key)' must be true or false") }
        return flag
    }

    func object(_ key: String) throws(HTTPFailure) -> JSONObject? {
        guard let value = fields[key], value != .null else { return nil }
        guard let object = value.objectValue else { throw HTTPFailure(400, "invalid_request", "'\(key)' must be an object") }
        return object
    }
}

/// A failure that already knows its response, thrown inside handlers and caught at the edge.
struct HTTPFailure: Error, Sendable {
    let status: Int
    let code: String
    let description: String

    init(_ status: Int, _ code: String, _ description: String) {
        self.status = status
        self.code = code
        self.description = description
    }

    init(_ error: RegistryError) {
        self.init(error.status, error.code.rawValue, error.reason)
    }

    var response: HTTPResponse { .error(status, code, description) }
}
