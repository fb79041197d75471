public import GatehouseCore

/// A complete response: status, headers and body bytes.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response from an `Encodable` value. Encoding our own types cannot fail in
    /// practice; if it does, the client gets a 500 rather than a crash.
    public static func json(_ value: some Encodable, status: Int = 200) -> HTTPResponse {
        guard let body = try? JSONCoding.encode(value) else {
            return jsonBytes(Array(#"{"error":"server_error","error_description":"response encoding failed"}"#.utf8), status: 500)
        }
        return jsonBytes(body, status: status)
    }

    /// A JSON response from a `JSONValue`, through the core's fast serializer.
    public static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        jsonBytes(value.serialized(), status: status)
    }

    /// A JSON response from bytes that are already JSON.
    public static func jsonBytes(_ body: [UInt8], status: Int = 200) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json; charset=utf-8")
        headers.add("Cache-Control", "no-store")
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    /// Gatehouse's own error shape, `{"error": code, "error_description": text}`.
    /// Built as a `JSONValue`: refusals are what a flood of bad requests costs the server.
    public static func error(_ status: Int, _ code: String, _ description: String) -> HTTPResponse {
        json(JSONValue.object(["error": .string(code), "error_description": .string(description)]), status: status)
    }

    /// An empty response, e.g. 204.
    public static func empty(_ status: Int) -> HTTPResponse {
        HTTPResponse(status: status)
    }
}
