internal import GatehouseCore
internal import HTTPServer

/// OAuth.io's response envelope on its own routes (oauthd-protocol.md §0).
enum JSend {
    static func success(_ data: JSONValue, status: Int = 200) -> HTTPResponse {
        .json(JSONValue.object(["status": "success", "data": data]), status: status)
    }

    /// `{"status":"error","message":…}`: the request was understood and refused.
    static func error(_ status: Int, _ message: String) -> HTTPResponse {
        .json(JSONValue.object(["status": "error", "message": .string(message)]), status: status)
    }

    /// `{"status":"fail","message":"Invalid format","data":{field: problem}}`: bad input.
    static func fail(_ status: Int, field: String, _ problem: String) -> HTTPResponse {
        .json(
            JSONValue.object(["status": "fail", "message": "Invalid format", "data": .object([field: .string(problem)])]),
            status: status)
    }

    /// The same response with CORS opened to every origin, as OAuth.io's `/api/*` routes do.
    static func withOpenCORS(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        response.headers.set("Access-Control-Allow-Origin", "*")
        response.headers.set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, OPTIONS")
        response.headers.set("Access-Control-Allow-Headers", "Authorization, Content-Type")
        return response
    }
}

/// Reads request fields the way OAuth.io does: the query for GET, the form or JSON body for POST.
struct RequestFields: Sendable {
    /// A JSON body's members. Kept as parsed, not copied into `values`: rehashing every
    /// member into a second dictionary cost more than the lookups that follow.
    private let object: [String: JSONValue]
    /// The query's fields (the first of each name), overridden by a form body's.
    private let values: [String: String]

    init(_ request: HTTPRequest) {
        var values: [String: String] = [:]
        for field in request.query where values[field.name] == nil { values[field.name] = field.value }
        var object: [String: JSONValue] = [:]
        if request.method == "POST" {
            if request.contentType.hasSuffixBytes("json"), let parsed = JSONValue.parse(request.body)?.objectValue {
                object = parsed
            } else if let fields = FormField.parse(bytes: request.body) {
                for field in fields { values[field.name] = field.value }
            }
        }
        self.object = object
        self.values = values
    }

    /// A JSON body's string member wins over the query's field of the same name; members that
    /// are not strings are ignored.
    subscript(name: String) -> String? {
        let value = object.isEmpty ? values[name] : (object[name]?.stringValue ?? values[name])
        return value.flatMap { $0.isEmpty ? nil : $0 }
    }
}
