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
    /// A JSON body's members. Kept as parsed, not copied into `query` or `form`: rehashing every
    /// member into a second dictionary cost more than the lookups that follow.
    private let object: JSONObject
    /// The query's fields, then a form body's, in arrival order. Kept as lists and searched
    /// in place: a request has a handful of fields, and hashing each into a dictionary cost
    /// more than the lookups it saved.
    private let query: [FormField]
    private let form: [FormField]
    /// The body was labelled JSON but is not a JSON object, so the fields it meant to carry
    /// are missing: a route can say that instead of naming the fields.
    let isMalformedJSON: Bool

    init(_ request: HTTPRequest) {
        var object: JSONObject = [:]
        var form: [FormField] = []
        var isMalformedJSON = false
        if request.method == "POST" {
            let saysJSON = request.contentType.hasSuffixBytes("json")
            if saysJSON, let parsed = JSONValue.parse(request.body)?.objectValue {
                object = parsed
            } else {
                isMalformedJSON = saysJSON && !request.body.isEmpty
                if let fields = FormField.parse(bytes: request.body) { form = fields }
            }
        }
        self.object = object
        self.isMalformedJSON = isMalformedJSON
        self.query = request.query
        self.form = form
    }

    /// A JSON body's string member wins over a form body's field (the last of its name), which
    /// wins over the query's (the first of its name); members that are not strings are ignored.
    subscript(name: String) -> String? {
        let value = (object.isEmpty ? nil : object[name]?.stringValue)
            ?? form.last(where: { $0.name == name })?.value ?? query.first(where: { $0.name == name })?.value
        return value.flatMap { $0.isEmpty ? nil : $0 }
    }
}
