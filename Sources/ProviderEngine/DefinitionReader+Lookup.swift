internal import GatehouseCore

extension DefinitionReader {
    /// `oauth2.lookup`: an endpoint (its keys) plus `export`, read with the profile mapping's
    /// expression language, and `optional`.
    mutating func lookup(_ value: JSONValue, base: String?) -> LoginLookup? {
        let path = "/oauth2/lookup"
        guard var members = object(value, at: path, keys: Self.endpointKeys.union(["export", "optional"])) else { return nil }
        let exportValue = members.removeValue(forKey: "export")
        let optional = optionalBool(members.removeValue(forKey: "optional"), at: path + "/optional") ?? false
        // Unknown keys were reported above; the endpoint reader would report them again.
        let endpoint = endpoint(.object(members.filter { Self.endpointKeys.contains($0.key) }), at: path, base: base)
        var export: [String: ProfileExpression] = [:]
        if let fields = exportValue?.objectValue, !fields.isEmpty {
            var expressions = ProfileReader(base: base)
            for (name, spec) in fields.sorted(by: { $0.key < $1.key }) {
                if let expression = expressions.expression(spec, at: path + "/export/" + name) { export[name] = expression }
            }
            defects += expressions.defects
        } else {
            defect(path + "/export", "required: an object naming the result fields the lookup adds")
        }
        guard let endpoint else { return nil }
        return LoginLookup(endpoint: endpoint, export: export, optional: optional)
    }
}
