import GatehouseCore
import ProviderEngine
import Testing

private func json(_ text: String) -> JSONValue {
    (try? JSONCoding.decode(JSONValue.self, from: Array(text.utf8))) ?? .null
}

/// Reads a definition whose only interesting part is `profile`.
private func mapping(_ profile: String) -> Result<ProfileMapping?, DefinitionFailure> {
    let document = json(#"{"name":"Demo","url":"https://api.example.com","oauth2":{"authorize":"/a","access_token":"/t","request":"https://api.example.com/v1"},"profile":\#(profile)}"#)
    return DefinitionReader.read(id: "demo", document: document).map(\.profileMapping)
}

private func defects(_ profile: String) -> [String] {
    if case .failure(let failure) = mapping(profile) { return failure.defects.map(\.description) }
    return []
}

private func evaluate(_ expression: String, _ document: String, exports: JSONObject = [:]) throws -> JSONValue? {
    let parsed = try #require(try mapping(#"{"fields":{"x":\#(expression)}}"#).get())
    let compiled = try #require(parsed.fields["x"])
    return ProfileEvaluator.evaluate(compiled, document: json(document), exports: exports)
}

/// The repository root, found from this file's path, for the shipped providers and fixtures.
private let repositoryRoot: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    parts.removeLast(3)
    return parts.joined(separator: "/")
}()

/// Runs a mapping the way `me` does, over recorded bodies (nil: an optional step that failed).
private func run(_ mapping: ProfileMapping, bodies: [JSONValue?]) -> JSONObject {
    var exports: JSONObject = [:]
    for (step, body) in zip(mapping.steps, bodies) {
        if let body { ProfileEvaluator.exports(of: step, body: body, into: &exports) }
    }
    let document = mapping.steps.isEmpty ? (bodies.first ?? nil) : bodies[mapping.document]
    return ProfileEvaluator.profile(mapping, document: document ?? .null, exports: exports)
}

@Suite("Profile mapping")
struct ProfileMappingTests {
    @Test("paths: nested keys, indexes from either end, odd keys, exports; malformed ones refused")
    func paths() throws {
        let document = json(#"{"a":{"b":[{"c":1},{"c":2}]},"profilePicture":{"displayImage~":{"elements":[{"ids":[{"id":"x"}]},{"ids":[{"id":"y"},{"id":"z"}]}]}}}"#)
        #expect(ProfilePath("a.b[0].c")?.resolve(in: document) == 1)
        #expect(ProfilePath("a.b[-1].c")?.resolve(in: document) == 2)
        #expect(ProfilePath("a.b[2].c")?.resolve(in: document) == nil)
        #expect(ProfilePath(#"profilePicture["displayImage~"].elements[-1].ids[-1].id"#)?.resolve(in: document) == "z")
        #expect(ProfilePath("$user.name")?.resolve(in: .null, exports: ["user": ["name": "Ada"]]) == "Ada")
        #expect(ProfilePath("")?.resolve(in: document) == document)
        #expect(ProfilePath("a.missing.deeper")?.resolve(in: document) == nil)
        #expect(ProfilePath("a.b.c")?.resolve(in: document) == nil, "a key on an array is absent, not an error")
        for bad in [".a", "a.", "a..b", "a[", "a[x]", "a]b", "$", "a{b}"] {
            #expect(ProfilePath(bad) == nil, "\(bad)")
        }
    }

    @Test("every expression form, and absence instead of errors")
    func expressions() throws {
        let person = #"{"first":"Ada","last":"Lovelace","nick":"","sex":"female","bdate":"10.12.1815","id":42,"n":1.5,"ok":"true","city":"London","country":"UK","emails":[{"value":"a@x","primary":false},{"value":"b@x","primary":true,"verified":true}],"full":"Ada King Lovelace","screen":"ada"}"#
        #expect(try evaluate(#""first""#, person) == "Ada")
        // A JSON null is absence, not a value: Optional.none, never .null.
        #expect(try evaluate(#""gone""#, #"{"gone":null}"#) == Optional<JSONValue>.none)
        #expect(try evaluate(#"{"find":"emails","where":{"primary":true},"then":"extra"}"#, #"{"emails":[{"primary":true,"extra":null}]}"#)
            == Optional<JSONValue>.none)
        #expect(try evaluate(#"{"path":"last"}"#, person) == "Lovelace")
        #expect(try evaluate(#"{"first":["nick","missing","first"]}"#, person) == "Ada", "empty strings are skipped")
        #expect(try evaluate(#"{"join":["first","missing","last"],"separator":" "}"#, person) == "Ada Lovelace")
        #expect(try evaluate(#"{"join":["city","country"],"separator":", "}"#, person) == "London, UK")
        #expect(try evaluate(#"{"template":"https://twitter.com/{screen}"}"#, person) == "https://twitter.com/ada")
        #expect(try evaluate(#"{"template":"https://x.example/{missing}"}"#, person) == nil)
        #expect(try evaluate(#"{"map":{"male":0,"female":1},"from":"sex"}"#, person) == 1)
        #expect(try evaluate(#"{"map":{"male":0},"from":"sex"}"#, person) == nil)
        #expect(try evaluate(#"{"map":{"male":0},"from":"sex","default":"other"}"#, person) == "other")
        #expect(try evaluate(#"{"date":"DD.MM.YYYY","from":"bdate"}"#, person) == ["day": 10, "month": 12, "year": 1815])
        #expect(try evaluate(#"{"date":["MM/DD/YYYY","DD.MM"],"from":"bdate"}"#, person) == nil, "no pattern fits the whole text")
        #expect(try evaluate(#"{"date":["MM/DD/YYYY","MM/DD","YYYY"],"from":{"value":"1815"}}"#, person) == ["year": 1815])
        #expect(try evaluate(#"{"date":"MM/DD","from":{"value":"13/01"}}"#, person) == nil, "month 13 is not a date")
        #expect(try evaluate(#"{"string":"id"}"#, person) == "42")
        #expect(try evaluate(#"{"string":"n"}"#, person) == "1.5")
        #expect(try evaluate(#"{"boolean":"ok"}"#, person) == true)
        #expect(try evaluate(#"{"boolean":"missing"}"#, person) == false)
        #expect(try evaluate(#"{"split":" ","from":"full","index":0}"#, person) == "Ada")
        #expect(try evaluate(#"{"split":" ","from":"full","index":1,"rest":true}"#, person) == "King Lovelace")
        #expect(try evaluate(#"{"split":" ","from":"full","index":-1}"#, person) == "Lovelace")
        #expect(try evaluate(#"{"split":" ","from":"first","index":1}"#, person) == nil)
        #expect(try evaluate(#"{"find":"emails","where":{"primary":true,"verified":true},"then":"value"}"#, person) == "b@x")
        #expect(try evaluate(#"{"find":"emails","where":{"primary":true,"verified":false}}"#, person) == nil)
        #expect(try evaluate(#"{"find":"first","where":{"primary":true}}"#, person) == nil, "find on a string is absent")
        #expect(try evaluate(#"{"object":{"business":"city","mobile":"missing"}}"#, person) == ["business": "London"])
        #expect(try evaluate(#"{"object":{"mobile":"missing"}}"#, person) == Optional<JSONValue>.none)
        #expect(try evaluate(#"{"join":["missing","nick"],"separator":" "}"#, person) == Optional<JSONValue>.none)
        #expect(try evaluate(#"{"value":{"a":1}}"#, person) == ["a": 1])
        #expect(try evaluate(#""$user_id""#, person, exports: ["user_id": "U1"]) == "U1")
    }

    @Test("a profile: empty fields dropped, email_verified by policy, raw always")
    func profile() throws {
        let parsed = try #require(try mapping(#"{"url":"/me","fields":{"id":{"string":"id"},"email":"mail","name":"nick"},"email_verified":{"path":"checked"}}"#).get())
        #expect(parsed.steps.map(\.url) == ["https://api.example.com/v1/me"], "relative profile URLs resolve against the request base")
        let full = ProfileEvaluator.profile(parsed, document: json(#"{"id":7,"mail":"a@x","nick":"","checked":"true"}"#))
        #expect(full == ["id": "7", "email": "a@x", "email_verified": true, "raw": json(#"{"id":7,"mail":"a@x","nick":"","checked":"true"}"#)])
        let unverified = ProfileEvaluator.profile(parsed, document: json(#"{"mail":"a@x","checked":"no"}"#))
        #expect(unverified["email_verified"] == false)
        let noEmail = ProfileEvaluator.profile(parsed, document: json(#"{"id":7}"#))
        #expect(noEmail["email_verified"] == nil && noEmail["email"] == nil)
        let notAnObject = ProfileEvaluator.profile(parsed, document: json(#"[1,2]"#))
        #expect(notAnObject == ["raw": [1, 2]], "a body of the wrong shape maps to nothing, not an error")
        #expect(ProfileEvaluator.filtered(full, keeping: ["email"]).keys.sorted() == ["email", "raw"])
    }

    @Test("multi-step fetch: exports feed later URLs and fields")
    func multiStep() throws {
        let parsed = try #require(try mapping(#"""
            {"fetch":[{"url":"https://slack.example/api/auth.test","export":{"user":"user_id"}},
                      {"url":"https://slack.example/api/users.info","query":{"user":"{{user}}","v":"{{today}}"}}],
             "fields":{"id":"$user","name":"user.real_name"}}
            """#).get())
        #expect(parsed.document == 1)
        #expect(parsed.steps[1].query == ["user": "{{user}}", "v": "{{today}}"])
        var exports: JSONObject = [:]
        ProfileEvaluator.exports(of: parsed.steps[0], body: json(#"{"ok":true,"user_id":"U123"}"#), into: &exports)
        #expect(exports == ["user": "U123"])
        let rendered = Template.render(parsed.steps[1].query["user"] ?? "", TemplateContext(flow: ["user": ProfileEvaluator.flowValue(exports["user"] ?? .null) ?? ""]))
        #expect(rendered == "U123")
        let profile = ProfileEvaluator.profile(parsed, document: json(#"{"user":{"real_name":"Ada"}}"#), exports: exports)
        #expect(profile["id"] == "U123" && profile["name"] == "Ada")
    }

    @Test("defects in a profile block are reported with their paths")
    func readerDefects() {
        let found = defects(#"""
            {"fetch":[{"url":"relative","method":"PUT","extra":1}],"document":3,"colour":1,
             "fields":{"raw":"x","a":{"path":"a..b"},"b":{"first":["x"],"join":["y"]},"c":{"frobnicate":"x"},"d":5,
                       "e":{"map":{"m":0}},"f":{"date":"QQ","from":"x"},"g":{"template":"no paths"},"h":{"split":"","from":"x"},
                       "i":{"find":"x"},"j":{"path":"x","separator":","}},
             "email_verified":{"nope":1}}
            """#)
        let expected = [
            "/profile/colour: unknown key",
            "/profile/fetch/0/extra: unknown key",
            "/profile/fetch/0/url: must be an absolute http(s) URL, or a path starting with / when the provider has a request url",
            "/profile/document: must be the index of a fetch step",
            "/profile/fields/raw: raw is always the provider's body",
            "/profile/fields/a/path: 'a..b' is not a valid path (a.b, a[0], a[-1], a[\"key\"], $export)",
            "/profile/fields/d: must be a path string or an expression object",
            "/profile/fields/e/from: required",
            "/profile/fields/f/date: must be a date pattern or a list of them (YYYY, MM, DD and separators)",
            "/profile/fields/g/template: a template needs at least one {path}",
            "/profile/fields/h/split: must be a non-empty string",
            "/profile/fields/i/where: required: an object of member values to match",
            "/profile/fields/j/separator: unknown key for path",
        ]
        for line in expected { #expect(found.contains(line), "missing: \(line)\nfound: \(found)") }
        #expect(found.contains { $0.hasPrefix("/profile/fields/b: needs exactly one of") })
        #expect(found.contains { $0.hasPrefix("/profile/fields/c: needs exactly one of") })
        #expect(found.contains { $0.hasPrefix("/profile/email_verified: needs exactly one of") })
        #expect(defects(#"{"url":"https://x.example/{nope}","fields":{}}"#) == ["/profile/fetch/0: {nope} is not a declared parameter"])
    }

    @Test("parameter defaults fill templates; token_proof is read and checked")
    func defaultsAndProof() throws {
        let document = json(#"""
            {"name":"Graph","oauth2":{"authorize":"https://www.example.com/{v}/dialog","access_token":"https://graph.example.com/{v}/token",
             "token_proof":{"name":"appsecret_proof","enabled_by":"proof"},
             "parameters":{"client_id":"string","client_secret":"string","v":{"default":"v19.0"},"proof":"string"}}}
            """#)
        let definition = try DefinitionReader.read(id: "graph", document: document).get()
        let oauth2 = try #require(definition.normalisedOAuth2)
        #expect(Template.render(oauth2.authorize.url, TemplateContext(keyset: [:], parameters: oauth2.parameters)) == "https://www.example.com/v19.0/dialog")
        #expect(Template.render(oauth2.authorize.url, TemplateContext(keyset: ["v": "v21.0"], parameters: oauth2.parameters)) == "https://www.example.com/v21.0/dialog")
        let proof = try #require(oauth2.tokenProof)
        #expect(proof.isEnabled(["proof": "true"]) && proof.isEnabled(["proof": true]) && !proof.isEnabled([:]) && !proof.isEnabled(["proof": "false"]))
        let bad = DefinitionReader.read(id: "graph", document: json(#"{"name":"G","oauth2":{"authorize":"https://a.example/","access_token":"https://a.example/t","token_proof":{"name":"p","enabled_by":"nope","x":1}}}"#))
        guard case .failure(let failure) = bad else { Issue.record("accepted"); return }
        #expect(failure.defects.map(\.description).sorted() == [
            "/oauth2/token_proof/enabled_by: 'nope' is not a declared parameter", "/oauth2/token_proof/x: unknown key",
        ])
    }

    @Test("token_invalid tells a refused token apart from a failing provider, whatever the status")
    func tokenInvalid() throws {
        let text = #"{"name":"S","oauth2":{"authorize":"https://s.example/a","access_token":"https://s.example/t","request":"https://api.s.example"},"#
            + #""profile":{"fetch":[{"url":"/me","token_invalid":{"map":{"190":true,"false":true},"from":{"first":["error.code","ok"]}}}],"fields":{"id":"id"}}}"#
        guard case .success(let definition) = DefinitionReader.read(id: "s", document: json(text)),
            let step = definition.profileMapping?.steps.first
        else { Issue.record("not read"); return }
        #expect(ProfileEvaluator.refusesToken(step, body: json(#"{"error":{"code":190,"type":"OAuthException"}}"#)))
        #expect(ProfileEvaluator.refusesToken(step, body: json(#"{"ok":false,"error":"invalid_auth"}"#)))
        #expect(!ProfileEvaluator.refusesToken(step, body: json(#"{"error":{"code":4}}"#)), "a rate limit is the provider's failure")
        #expect(!ProfileEvaluator.refusesToken(step, body: json(#"{"ok":true,"id":"U1"}"#)))
        let bad = DefinitionReader.read(id: "s", document: json(#"{"name":"S","oauth2":{"authorize":"https://s.example/a","access_token":"https://s.example/t","request":"https://api.s.example"},"profile":{"fetch":[{"url":"/me","token_invalid":{"nope":1}}],"fields":{"id":"id"}}}"#))
        guard case .failure(let failure) = bad else { Issue.record("accepted"); return }
        #expect(failure.defects.contains { $0.path.hasPrefix("/profile/fetch/0/token_invalid") })
    }

    @Test("every shipped provider's mapping against its recorded profiles, full and sparse")
    func shippedProviders() throws {
        let catalog = ProviderCatalog(directories: [repositoryRoot + "/providers"])
        #expect(catalog.defects.isEmpty, "\(catalog.defects)")
        // Each fixture names its provider, holds the bodies each fetch step answered (null for a
        // step that failed) and the unified profile expected from them.
        let directory = repositoryRoot + "/Tests/Fixtures/profiles"
        let names = FileSystem.entries(directory).filter { $0.hasSuffix(".json") }.sorted()
        var covered: Set<String> = []
        for file in names {
            let name = String(file.dropLast(5))
            let text = try #require(FileSystem.read(directory + "/" + file), "fixture \(name)")
            let fixture = try #require(JSONValue.parse(text), "fixture \(name) is JSON")
            let provider = try #require(fixture["provider"]?.stringValue)
            let expected = try #require(fixture["expected"]?.objectValue, "\(name) has an expected profile")
            let mapping = try #require(catalog.definition(provider)?.profileMapping, "\(provider) has a profile mapping")
            covered.insert(provider)
            let bodies = (fixture["steps"]?.arrayValue ?? []).map { $0 == .null ? nil : $0 }
            var profile = run(mapping, bodies: bodies)
            let raw = profile.removeValue(forKey: "raw")
            #expect(raw == bodies[mapping.steps.isEmpty ? 0 : mapping.document], "\(name): raw is the provider's body untouched")
            #expect(profile == expected, "\(name)")
            for field in profile.keys where !ProfileMapping.unifiedFields.contains(field) {
                #expect(field == "bio", "\(name): \(field) is not a unified field")
            }
        }
        let withProfiles = catalog.all.filter { $0.definition.profileMapping != nil }.map(\.definition.id)
        #expect(Set(withProfiles).isSubset(of: covered), "every provider with a mapping has a fixture")
    }
}
