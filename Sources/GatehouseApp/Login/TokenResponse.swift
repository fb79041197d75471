internal import GatehouseCore
internal import HTTPClient
internal import ProviderEngine

/// Parses what a provider's token endpoint answered: JSON or form-encoded, chosen by the
/// endpoint's declared `format`, else by Content-Type, else whichever parses.
enum TokenResponse {
    /// The token fields of `endpoint`'s answer: the object at its `answer` path when the
    /// provider wraps them there, else the answer itself (providers that wrap successes often
    /// send errors unwrapped, and an error must still be read).
    /// `names` then gives each OAuth field its value from the provider's own name for it.
    static func fields(of response: HTTPClientResponse, endpoint: Endpoint, defaultFormat: String? = nil) -> JSONObject? {
        var response = response
        if let prefix = endpoint.prefix { response.body = dropping(prefix, from: response.body) }
        guard var fields = fields(of: response, format: endpoint.format ?? defaultFormat) else { return nil }
        if let answer = endpoint.answer, let nested = answer.resolve(in: .object(fields))?.objectValue { fields = nested }
        for (name, theirs) in endpoint.names {
            if let value = fields[theirs] { fields[name] = value }
        }
        return fields
    }

    static func fields(of response: HTTPClientResponse, format: String?) -> JSONObject? {
        let declared = format?.lowercased()
        let contentType = response.header("content-type")?.lowercased() ?? ""
        let preferJSON = declared == "json" || declared?.containsBytes("json") == true || (declared == nil && contentType.containsBytes("json"))
        let preferForm = declared == "url" || declared?.containsBytes("x-www-form-urlencoded") == true
            || (declared == nil && contentType.containsBytes("x-www-form-urlencoded"))
        if preferJSON { return json(response.body) ?? form(response.body) }
        if preferForm { return form(response.body) ?? json(response.body) }
        return json(response.body) ?? form(response.body)
    }

    /// `body` without the endpoint's `prefix` (after any leading whitespace), if it starts with it.
    static func dropping(_ prefix: String, from body: [UInt8]) -> [UInt8] {
        let marker = Array(prefix.utf8)
        let start = body.firstIndex { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } ?? body.endIndex
        guard body[start...].starts(with: marker) else { return body }
        return Array(body[(start + marker.count)...])
    }

    private static func json(_ body: [UInt8]) -> JSONObject? {
        JSONValue.parse(body)?.objectValue
    }

    private static func form(_ body: [UInt8]) -> JSONObject? {
        let text = String(decoding: body, as: UTF8.self)
        guard text.containsBytes("="), let fields = FormField.parse(text) else { return nil }
        var result: JSONObject = [:]
        for field in fields { result[field.name] = .string(field.value) }
        return result
    }

    /// The first of `expire`, `expires`, `expires_in`, `expires_at` as seconds from now.
    /// A value that looks like an absolute time in milliseconds is converted, as OAuth.io does.
    static func expiresIn(_ fields: JSONObject) -> Int? {
        for key in ["expire", "expires", "expires_in", "expires_at"] {
            guard let value = fields[key] else { continue }
            var number: Double?
            switch value {
            case .number(let n): number = n
            case .string(let text): number = Double(text)
            default: break
            }
            guard let number else { continue }
            let nowMilliseconds = Double(Timestamp.now()) * 1000
            if number > nowMilliseconds { return Int((number - nowMilliseconds) / 1000) }
            if key == "expires_at", number > Double(Timestamp.now()) { return Int(number) - Int(Timestamp.now()) }
            return Int(number)
        }
        return nil
    }

    /// True when `errorData` says the provider refused the token the caller sent (expired,
    /// revoked or unknown) rather than failing, or refusing the gateway's own client
    /// credentials: RFC 6749 §5.2 `invalid_grant`, RFC 6750 `invalid_token`, and the Graph
    /// API's code 190 (invalid access token).
    /// The provider refused the app's own credentials (for Apple, a client_secret to re-mint).
    static func refusesClient(_ data: JSONValue) -> Bool {
        data["error"] == "invalid_client"
    }

    static func rejectsCallerToken(_ data: JSONValue) -> Bool {
        ["invalid_grant", "invalid_token"].contains(data["error"]?.stringValue ?? "")
            || (data["type"] == "OAuthException" && data["code"] == 190)
    }

    /// What an error's `data` says went wrong, for a message: the description, Graph's nested
    /// message, the error code, else the HTTP status.
    static func reason(_ data: JSONValue, status: Int) -> String {
        data["error_description"]?.stringValue ?? data["message"]?.stringValue ?? data["error"]?.stringValue ?? "HTTP \(status)"
    }

    /// The provider's own error fields, for the `data` of an error message. Only the
    /// standard fields are passed on, so an odd provider body cannot leak anything else.
    static func errorData(_ fields: JSONObject?) -> JSONValue {
        guard let fields else { return .null }
        var data: JSONObject = [:]
        for key in ["error", "error_description", "error_uri", "oauth_problem"] {
            if let value = fields[key]?.stringValue { data[key] = .string(String(value.prefix(500))) }
        }
        // Some providers (Xiaomi) send a numeric error code.
        if case .number(let code)? = fields["error"] { data["error"] = .number(code) }
        if let nested = fields["error"]?.objectValue {
            for key in ["message", "type", "code"] {
                if let value = nested[key] { data[key] = value }
            }
        }
        return data.isEmpty ? .null : .object(data)
    }
}
