internal import GatehouseCore
internal import ProviderEngine

/// The normalised provider as OAuth.io's `?extend=true` shows it: every endpoint an object
/// with its full URL and default query filled in, plus `request.required`.
enum ExtendedView {
    static func document(_ definition: ProviderDefinition) -> JSONValue {
        var object: JSONObject = ["provider": .string(definition.id), "name": .string(definition.name)]
        if let url = definition.url { object["url"] = .string(url) }
        if let oauth2 = definition.normalisedOAuth2 {
            var block: JSONObject = [
                "authorize": endpoint(oauth2.authorize), "access_token": endpoint(oauth2.accessToken),
                "parameters": parameters(oauth2.parameters),
            ]
            if let request = oauth2.request { block["request"] = endpoint(request, isRequest: true) }
            if let refresh = oauth2.refresh { block["refresh"] = endpoint(refresh) }
            if let revoke = oauth2.revoke { block["revoke"] = endpoint(revoke) }
            if let lookup = oauth2.lookup, case .object(var described) = endpoint(lookup.endpoint) {
                described["export"] = .array(lookup.export.keys.sorted().map(JSONValue.string))
                block["lookup"] = .object(described)
            }
            object["oauth2"] = .object(block)
        }
        if let oauth1 = definition.normalisedOAuth1 {
            var block: JSONObject = [
                "request_token": endpoint(oauth1.requestToken), "authorize": endpoint(oauth1.authorize),
                "access_token": endpoint(oauth1.accessToken), "parameters": parameters(oauth1.parameters),
            ]
            if let request = oauth1.request { block["request"] = endpoint(request, isRequest: true) }
            object["oauth1"] = .object(block)
        }
        return .object(object)
    }

    private static func endpoint(_ endpoint: Endpoint, isRequest: Bool = false) -> JSONValue {
        var object: JSONObject = ["url": .string(endpoint.url), "method": .string(endpoint.method.lowercased())]
        if let query = endpoint.query { object["query"] = .object(JSONObject(strings: query)) }
        if let headers = endpoint.headers { object["headers"] = .object(JSONObject(strings: headers)) }
        if let format = endpoint.format { object["format"] = .string(format) }
        if !endpoint.extra.isEmpty { object["extra"] = .array(endpoint.extra.map(JSONValue.string)) }
        if !endpoint.export.isEmpty { object["export"] = .array(endpoint.export.keys.sorted().map(JSONValue.string)) }
        if endpoint.body != .form { object["body"] = .string(endpoint.body.rawValue) }
        if let answer = endpoint.answer { object["answer"] = .string(answer.description) }
        if !endpoint.names.isEmpty { object["names"] = .object(JSONObject(strings: endpoint.names)) }
        if let prefix = endpoint.prefix { object["prefix"] = .string(prefix) }
        if !endpoint.hosts.isEmpty { object["hosts"] = .array(endpoint.hosts.map { .string($0.description) }) }
        if isRequest {
            object["required"] = .array(ProviderDefinition.requiredFields(of: endpoint).map(JSONValue.string))
            if endpoint.cors { object["cors"] = true }
        }
        return .object(object)
    }

    private static func parameters(_ parameters: [String: Parameter]) -> JSONValue {
        .object(JSONObject(parameters.mapValues { parameter in
            var object: JSONObject = ["type": "string", "cardinality": .string(parameter.cardinality)]
            if let values = parameter.values {
                object["values"] = .object(JSONObject(strings: values))
                object["separator"] = .string(parameter.separator)
            }
            return .object(object)
        }))
    }
}
