import Carrier
import GatehouseCore
import JOSE
import ProviderEngine
import Testing

/// The definition `json` describes, or its defects.
func read(_ json: String, id: String = "demo") -> Result<ProviderDefinition, DefinitionFailure> {
    DefinitionReader.read(id: id, document: JSONValue.parse(Array(json.utf8)) ?? .null)
}

private func defects(_ json: String) -> [String] {
    if case .failure(let failure) = read(json) { return failure.defects.map(\.description) }
    return []
}

@Suite("Provider definitions")
struct DefinitionTests {
    @Test("a minimal OAuth 2 definition reads, with relative URLs resolved against the base")
    func minimal() throws {
        let definition = try read(#"{"name":"Demo","url":"https://id.example.com/","oauth2":{"authorize":"/auth","access_token":"https://api.example.com/token"}}"#).get()
        #expect(definition.oauth2?.authorize.url == "https://id.example.com/auth")
        #expect(definition.oauth2?.authorize.method == "GET")
        #expect(definition.oauth2?.accessToken.method == "POST")
        #expect(definition.oauth2?.parameters.keys.sorted() == ["client_id", "client_secret"])
        #expect(definition.defaultVersion == .oauth2)
    }

    @Test("every defect is reported with its JSON path, unknown keys included")
    func defectsWithPaths() {
        let found = defects(
            #"{"name":"","acces_token":1,"oauth2":{"authorize":{"url":"relative","method":"FETCH","cors":"yes"},"parameters":{"scope":{"separator":"-","cardinality":"2"}}},"openid":{"issuer":"x"}}"#)
        #expect(found.contains("/name: must be a non-empty string"))
        #expect(found.contains("/acces_token: unknown key"))
        #expect(found.contains("/oauth2/authorize/url: must be an absolute http(s) URL or a path starting with /"))
        #expect(found.contains("/oauth2/authorize/method: must be one of GET, POST, PUT, PATCH, DELETE"))
        #expect(found.contains("/oauth2/authorize/cors: must be true or false"))
        #expect(found.contains("/oauth2/access_token: required"))
        #expect(found.contains("/oauth2/parameters/scope/separator: must be one of ' ', ',', '|', ';', '+'"))
        #expect(found.contains("/oauth2/parameters/scope/cardinality: must be \"1\" or \"*\""))
        #expect(found.contains("/openid/jwks_uri: required unless every algorithm is an HMAC one (HS256, HS384, HS512)"))
    }

    @Test("body and answer: JSON token requests and wrapped answers, refused where they cannot work")
    func bodyAndAnswer() throws {
        let definition = try read(#"{"name":"J","oauth2":{"authorize":"https://x/a","access_token":{"url":"https://x/t","body":"json","answer":"data.token"}},"profile":{"fetch":[{"url":"https://x/graphql","method":"POST","body":"json","query":{"query":"{ me { id } }"}}],"fields":{"id":"data.me.id"}}}"#).get()
        let accessToken = try #require(definition.normalisedOAuth2?.accessToken)
        #expect(accessToken.body == .json)
        #expect(accessToken.answer?.resolve(in: ["data": ["token": ["access_token": "t"]]]) == ["access_token": "t"])
        #expect(definition.profileMapping?.steps.first?.body == .json)
        let found = defects(#"{"name":"D","oauth2":{"authorize":"https://x/a","access_token":{"url":"https://x/t","body":"xml","answer":"a..b"}},"profile":{"fetch":[{"url":"https://x/me","body":"json"}],"fields":{"id":"id"}}}"#)
        #expect(found.contains("/oauth2/access_token/body: must be form or json"))
        #expect(found.contains("/oauth2/access_token/answer: 'a..b' is not a valid path (a.b, a[0])"))
        #expect(found.contains("/profile/fetch/0/body: json needs method POST"), "\(found)")
        let renamed = try read(#"{"name":"R","oauth2":{"authorize":"https://x/a","access_token":{"url":"https://x/t","names":{"access_token":"accessToken"}}}}"#).get()
        #expect(renamed.normalisedOAuth2?.accessToken.names == ["access_token": "accessToken"])
        #expect(defects(#"{"name":"R","oauth2":{"authorize":"https://x/a","access_token":{"url":"https://x/t","names":{"token":"t"}}}}"#)
            == ["/oauth2/access_token/names/token: must be one of access_token, error, error_description, expires_in, id_token, refresh_token, scope, token_type"])
        let oauth1 = defects(#"{"name":"O","oauth1":{"request_token":"https://x/r","authorize":"https://x/a","access_token":{"url":"https://x/t","body":"json"}}}"#)
        #expect(oauth1 == ["/oauth1/access_token/body: must be form: an OAuth 1.0a signature covers form bodies only"])
    }

    @Test("a flow value may not choose an endpoint's or a profile step's host; a keyset value may")
    func flowValueHost() {
        let found = defects(#"{"name":"H","oauth2":{"authorize":"https://x/a","access_token":"https://x/t","request":"https://{{host}}/api","parameters":{"client_id":"string","client_secret":"string","domain":"string"}},"profile":{"fetch":[{"url":"{{href}}/me"}],"fields":{"id":"id"}}}"#)
        #expect(found.contains("/oauth2/request/url: a flow value ({{…}}) cannot choose the host unless the endpoint lists the hosts it may name"), "\(found)")
        #expect(found.contains("/profile/fetch/0/url: a flow value ({{…}}) cannot choose the host: it would choose who gets the token"), "\(found)")
        #expect(defects(#"{"name":"K","oauth2":{"authorize":"https://{domain}/a","access_token":"https://{domain}/t/{{code}}","parameters":{"client_id":"string","client_secret":"string","domain":"string"}}}"#).isEmpty)
    }

    @Test("a request URL may take its origin or host from the login when it lists the hosts; only there, and only as the whole origin or host")
    func learnedHost() throws {
        let parameters = #""parameters":{"client_id":"string","client_secret":"string"}"#
        let good = #"{"name":"S","url":"https://login.example.com","oauth2":{"authorize":"/a","access_token":"/t","#
            + #""request":{"url":"{{instance_url}}/services","hosts":["https://*.example.com","https://api.example.org:8443"]},"# + parameters
            + #"},"profile":{"fetch":[{"url":"/me"},{"url":"{{instance_url}}/id"}],"fields":{"id":"id"}}}"#
        let definition = try read(good).get()
        #expect(definition.oauth2?.request?.hosts.map(\.description) == ["https://*.example.com", "https://api.example.org:8443"])
        #expect(definition.profileMapping?.steps.map(\.url) == ["{{instance_url}}/services/me", "{{instance_url}}/id"])
        #expect(defects(#"{"name":"W","oauth2":{"authorize":"https://x/a","access_token":"https://x/t","request":{"url":"https://{{host}}/api/v4","hosts":["https://www.example.com"]}}}"#).isEmpty)
        // A token endpoint on the host the callback names (pCloud, Kommo), within its hosts.
        let callbackHost = try read(
            #"{"name":"K","oauth2":{"authorize":{"url":"https://x/a","extra":["referer"]},"#
                + #""access_token":{"url":"https://{{referer}}/oauth2/access_token","hosts":["https://*.kommo.com"]}}}"#).get()
        #expect(callbackHost.oauth2?.accessToken.learnedHostFields == ["referer"])
        // OAuth 1.0a's token exchange does not check a named host, so it may not have one.
        let oauth1 = defects(
            #"{"name":"O","oauth1":{"request_token":"https://x/rt","authorize":{"url":"https://x/a","extra":["host"]},"#
                + #""access_token":{"url":"https://{{host}}/at","hosts":["https://*.example.com"]}}}"#)
        #expect(oauth1.contains("/oauth1/access_token/hosts: only request and OAuth 2 access_token, refresh and revoke endpoints may list hosts"), "\(oauth1)")

        let found = defects(
            #"{"name":"B","oauth2":{"authorize":{"url":"https://x/a","hosts":["https://x"]},"access_token":"https://x/t","#
                + #""request":{"url":"https://api.{{region}}.example.com","hosts":["https://*.com","ftp://x","https://x/path","https://a.*.b"]}}}"#)
        // With no valid host left, the URL is judged as one without hosts.
        #expect(found.sorted() == [
            "/oauth2/authorize/hosts: only request and OAuth 2 access_token, refresh and revoke endpoints may list hosts",
            "/oauth2/request/hosts/0: must be an origin such as https://api.example.com or https://*.example.com",
            "/oauth2/request/hosts/1: must be an origin such as https://api.example.com or https://*.example.com",
            "/oauth2/request/hosts/2: must be an origin such as https://api.example.com or https://*.example.com",
            "/oauth2/request/hosts/3: must be an origin such as https://api.example.com or https://*.example.com",
            "/oauth2/request/url: a flow value ({{…}}) cannot choose the host unless the endpoint lists the hosts it may name",
        ], "\(found)")
        // A host may be built of flow values and fixed text after a scheme, but nothing else may.
        #expect(defects(#"{"name":"P","oauth2":{"authorize":"https://x/a","access_token":"https://x/t","request":{"url":"https://api.{{region}}.example.com","hosts":["https://x"]}}}"#).isEmpty)
        for url in ["https://{{user}}@x.example.com", "https://{{a}}.x.com?{{b}}", "https://{{a}}.x.com#{{b}}", "{{region}}.example.com/x"] {
            let found = defects(#"{"name":"P","oauth2":{"authorize":"https://x/a","access_token":"https://x/t","request":{"url":""# + url + #"","hosts":["https://x"]}}}"#)
            #expect(found == [url.hasPrefix("https") ? Self.hostShapeDefect : "/oauth2/request/url: must be an absolute http(s) URL or a path starting with /"], "\(url)")
        }
        #expect(defects(#"{"name":"N","oauth2":{"authorize":"https://x/a","access_token":"https://x/t","request":{"url":"https://x/api","hosts":["https://x"]}}}"#)
            == ["/oauth2/request/hosts: needs a url whose origin is a flow value ({{instance_url}}/…)"])
    }

    static let hostShapeDefect = "/oauth2/request/url: a flow value may choose the host only as the whole origin ({{name}}/path) "
        + "or as the host after a scheme, alone or with fixed text (https://{{name}}/path, https://{{a}}.{{b}}.example.com/path)"

    @Test("a token answer's prefix is read, and must be 1 to 64 characters")
    func prefix() throws {
        let definition = try read(#"{"name":"X","oauth2":{"authorize":"https://x/a","access_token":{"url":"https://x/t","method":"GET","prefix":"&&&START&&&"}}}"#).get()
        #expect(definition.oauth2?.accessToken.prefix == "&&&START&&&")
        #expect(defects(#"{"name":"X","oauth2":{"authorize":"https://x/a","access_token":{"url":"https://x/t","prefix":""}}}"#)
            == ["/oauth2/access_token/prefix: must be 1 to 64 characters"])
    }

    @Test("private_key_jwt sends an assertion in place of the secret, needs the key declared, and may name aud and alg")
    func privateKeyJWT() throws {
        let base = #"{"name":"J","url":"https://x","oauth2":{"authorize":"/a","access_token":"/t","refresh":"/t","revoke":"/r","#
        let keyed = #""parameters":{"client_id":"string","private_key":"string","issuer":"string"}"#
        let good = try read(base + #""client_authentication":"private_key_jwt","# + keyed + "}}").get()
        let oauth2 = try #require(good.normalisedOAuth2)
        for query in [oauth2.accessToken.query, oauth2.refresh?.query, oauth2.revoke?.query] {
            #expect(query?["client_assertion"] == "{{client_assertion}}" && query?["client_secret"] == nil && query?["client_id"] == "{client_id}")
            #expect(query?["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        }
        let ruled = try read(base + #""client_authentication":"private_key_jwt","client_assertion":{"audience":"{issuer}","algorithm":"RS512"},"# + keyed + "}}").get()
        #expect(ruled.oauth2?.clientAssertion?.audience == "{issuer}" && ruled.oauth2?.clientAssertion?.algorithm == "RS512")
        #expect(defects(base + #""client_authentication":"private_key_jwt"}}"#) == ["/oauth2/parameters: private_key_jwt signs with the keyset's private_key: declare it"])
        #expect(defects(base + #""client_assertion":{"algorithm":"RS256"}}}"#)
            == [#"/oauth2/client_assertion: only with "client_authentication": "private_key_jwt" or "client_secret_jwt""#])
        #expect(defects(base + #""client_authentication":"private_key_jwt","client_assertion":{"algorithm":"HS256","aud":"x"},"# + keyed + "}}").sorted() == [
            "/oauth2/client_assertion/algorithm: must be one of RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384",
            "/oauth2/client_assertion/aud: unknown key",
        ])
        #expect(defects(base + #""client_authentication":"private_key_jwt","client_assertion":{"audience":"{tenant}"},"# + keyed + "}}")
            == ["/oauth2/client_assertion/audience: {tenant} is not a declared parameter"])
        #expect(defects(base + #""client_authentication":"jwt"}}"#)
            == [#"/oauth2/client_authentication: must be "body", "basic", "private_key_jwt" or "client_secret_jwt""#])
        // client_secret_jwt: the secret keys an HMAC, so only HS algorithms, and no private_key is needed.
        let secret = try read(base + #""client_authentication":"client_secret_jwt","client_assertion":{"algorithm":"HS512"}}}"#).get()
        #expect(secret.normalisedOAuth2?.accessToken.query?["client_assertion"] == "{{client_assertion}}")
        #expect(defects(base + #""client_authentication":"client_secret_jwt","client_assertion":{"algorithm":"RS256"}}}"#)
            == ["/oauth2/client_assertion/algorithm: must be one of HS256, HS384, HS512"])
    }

    @Test("dpop needs the keyset's dpop_key declared, and makes the default API header carry the DPoP scheme")
    func dpop() throws {
        let base = #"{"name":"D","url":"https://x","oauth2":{"authorize":"/a","access_token":"/t","dpop":true"#
        let good = try read(base + #","parameters":{"client_id":"string","client_secret":"string","dpop_key":"string"}}}"#).get()
        #expect(good.oauth2?.dpop == true && good.normalisedOAuth2?.request?.headers == ["Authorization": "DPoP {{token}}"])
        #expect(defects(base + "}}") == ["/oauth2/parameters: dpop signs its proofs with the keyset's dpop_key: declare it"])
        #expect(defects(#"{"name":"D","url":"https://x","oauth2":{"authorize":"/a","access_token":"/t","dpop":"yes"}}"#)
            == ["/oauth2/dpop: must be true or false"])
    }

    @Test("scopeless declares that a login needs no scope; it cannot come with a default scope")
    func scopeless() throws {
        let base = #"{"name":"S","url":"https://x","oauth2":{"authorize":"/a","access_token":"/t","scopeless":true"#
        #expect(try read(base + "}}").get().oauth2?.scopeless == true)
        #expect(try read(#"{"name":"S","url":"https://x","oauth2":{"authorize":"/a","access_token":"/t"}}"#).get().oauth2?.scopeless == false)
        #expect(defects(base + #","parameters":{"client_id":"string","scope":{"values":{"a":"A"},"default":"a"}}}}"#)
            == ["/oauth2/scopeless: a provider that needs no scope has no default scope: drop one or the other"])
        #expect(defects(#"{"name":"S","url":"https://x","oauth2":{"authorize":"/a","access_token":"/t","scopeless":1}}"#) == ["/oauth2/scopeless: must be true or false"])
    }

    @Test("par names the pushed authorization request endpoint, a POST by default, in the oauth2 block only")
    func pushedAuthorization() throws {
        let good = try read(#"{"name":"P","url":"https://x","oauth2":{"authorize":"/a","access_token":"/t","par":"/par"}}"#).get()
        #expect(good.oauth2?.pushedAuthorization?.url == "https://x/par" && good.oauth2?.pushedAuthorization?.method == "POST")
        #expect(defects(#"{"name":"P","url":"https://x","oauth2":{"authorize":"/a","access_token":"/t","par":{"url":"/par","query":{"x":"{tenant}"}}}}"#)
            == ["/oauth2/par/query/x: {tenant} is not a declared parameter"])
        #expect(defects(#"{"name":"P","url":"https://x","oauth1":{"request_token":"/r","authorize":"/a","access_token":"/t","par":"/par"}}"#)
            == ["/oauth1/par: unknown key"])
    }

    @Test("a profile step may read a signed JWT answer, only where an openid block says whose keys sign it")
    func signedProfileStep() throws {
        let base = #"{"name":"S","url":"https://x","oauth2":{"authorize":"/a","access_token":"/t","request":"https://x/api"},"#
        let step = #""profile":{"fetch":[{"url":"/userinfo","format":"jwt"}],"fields":{"id":"sub"}}"#
        let good = try read(base + #""openid":{"issuer":"https://x","jwks_uri":"https://x/jwks"},"# + step + "}").get()
        #expect(good.profileMapping?.steps.first?.signed == true)
        #expect(defects(base + step + "}") == ["/profile/fetch/0/format: jwt needs an openid block, whose issuer and keys the answer is checked against"])
        #expect(defects(base + #""profile":{"fetch":[{"url":"/userinfo","format":"xml"}],"fields":{"id":"sub"}}}"#)
            == ["/profile/fetch/0/format: must be json or jwt"])
    }

    @Test("an openid block may name its issuer and keys after the keyset's tenant, never after a flow value")
    func tenantIssuer() throws {
        let base = #"{"name":"T","url":"https://{domain}","oauth2":{"authorize":"/a","access_token":"/t","parameters":{"domain":"string"}},"#
        let good = try read(base + #""openid":{"issuer":"https://{domain}/","jwks_uri":"https://{domain}/keys/"}}"#).get()
        let rendered = try #require(good.openid).rendered(TemplateContext(keyset: ["domain": "acme.example"], parameters: good.oauth2?.parameters ?? [:]))
        #expect(rendered.issuer == "https://acme.example/" && rendered.jwksURI == "https://acme.example/keys/")
        #expect(defects(base + #""openid":{"issuer":"https://{{host}}","jwks_uri":"https://{tenant}/keys"}}"#) == [
            "/openid/issuer: flow values ({{…}}) cannot name the issuer or its keys", "/openid/jwks_uri: {tenant} is not a declared parameter",
        ])
        #expect(defects(base + #""openid":{"issuer":"https://x","jwks_uri":"/keys"}}"#) == ["/openid/jwks_uri: must be an absolute http(s) URL"])
        let overridable = #"{"name":"T","url":"https://{domain}","oauth2":{"authorize":"/a","access_token":"/t","parameters":{"domain":"string","#
        #expect(try read(overridable + #""issuer":{"default":"https://{domain}/"}}},"openid":{"issuer":"{issuer}","jwks_uri":"https://{domain}/k"}}"#).get()
            .oauth2?.parameters["issuer"]?.defaultValue == "https://{domain}/")
        #expect(defects(overridable + #""issuer":{"default":"{{host}}{issuer}{tenant}"}}}}"#) == [
            "/oauth2/parameters/issuer/default: flow values ({{…}}) cannot be a default",
            "/oauth2/parameters/issuer/default: {issuer} is not another declared parameter",
            "/oauth2/parameters/issuer/default: {tenant} is not another declared parameter",
        ])
        let secretive = #"{"name":"T","url":"https://x","oauth2":{"authorize":"/a","access_token":"/t","parameters":{"client_secret":"string","#
        #expect(defects(secretive + #""realm":{"default":"r-{client_secret}"}}},"openid":{"issuer":"https://x/{client_secret}","jwks_uri":"https://x/k"}}"#) == [
            "/oauth2/parameters/realm/default: {client_secret} holds a secret, which a default cannot copy",
            "/openid/issuer: {client_secret} holds a secret, which cannot name the issuer or its keys",
        ])
        #expect(defects(base + #""openid":{"issuer":"https://x","jwks_uri":"https://x/keys","encrypted":true}}"#)
            == ["/openid/encrypted: encrypted tokens are opened with the keyset's encryption_key: declare it"])
    }

    @Test("request_object: true takes the defaults; its key must be declared, its audience known, its claims free of flow values")
    func requestObject() throws {
        let base = #"{"name":"J","url":"https://x","oauth2":{"authorize":"/a","access_token":"/t","parameters":{"client_id":"string","private_key":"string"},"#
        let openid = #""openid":{"issuer":"https://x","jwks_uri":"https://x/keys"}"#
        let plain = try read(base + #""request_object":true},"# + openid + "}").get()
        #expect(plain.oauth2?.requestObject == RequestObjectRule())
        let typed = try read(base + #""request_object":{"audience":"https://x/{client_id}","query":["client_id"],"claims":{"flag":false}}}}"#).get()
        #expect(typed.oauth2?.requestObject == RequestObjectRule(audience: "https://x/{client_id}", query: ["client_id"], claims: ["flag": false]))
        #expect(defects(base + #""request_object":true}}"#) == ["/oauth2/request_object/audience: required without an openid block, whose issuer is the default"])
        #expect(defects(base + #""request_object":{"algorithm":"HS512","claims":{"x":"{{state}}","y":"{tenant}"}}},"# + openid + "}") == [
            "/oauth2/parameters: request_object signs with the keyset's client_secret: declare it",
            "/oauth2/request_object: flow values ({{…}}) belong in the authorize query, which the request object carries",
            "/oauth2/request_object: {tenant} is not a declared parameter",
        ])
        let sealed = try read(base + #""request_object":{"encryption":true}},"# + openid + "}").get()
        #expect(sealed.oauth2?.requestObject?.encryption == RequestObjectEncryption(keyAlgorithm: .rsaOAEP256, contentAlgorithm: .a256GCM))
        let chosen = try read(base + #""request_object":{"encryption":{"alg":"RSA-OAEP","enc":"A128CBC-HS256"}}},"# + openid + "}").get()
        #expect(chosen.oauth2?.requestObject?.encryption == RequestObjectEncryption(keyAlgorithm: .rsaOAEP, contentAlgorithm: .a128CBCHS256))
        #expect(defects(base + #""request_object":{"encryption":{"alg":"RSA1_5","enc":"A128KW","zip":"DEF"}}},"# + openid + "}") == [
            "/oauth2/request_object/encryption/zip: unknown key",
            "/oauth2/request_object/encryption/alg: must be one of RSA-OAEP, RSA-OAEP-256",
            "/oauth2/request_object/encryption/enc: must be one of A128CBC-HS256, A192CBC-HS384, A256CBC-HS512, A128GCM, A192GCM, A256GCM",
        ])
        #expect(defects(base + #""request_object":{"audience":"https://x","encryption":true}}}"#)
            == ["/oauth2/request_object/encryption: the provider's encryption key comes from the openid block's jwks_uri: declare it"])
        #expect(defects(base + #""request_object":{"algorithm":"none","claims":[]}},"# + openid + "}") == [
            "/oauth2/request_object/algorithm: must be one of RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, HS256, HS384, HS512",
            "/oauth2/request_object/claims: must be an object",
        ])
    }

    @Test("OAuth 1 sign_requests: true by default; false needs a request block to authorise calls")
    func unsignedRequests() throws {
        let base = #"{"name":"Z","url":"https://x","oauth1":{"request_token":"/r","authorize":"/a","access_token":"/t""#
        #expect(try read(base + "}}").get().oauth1?.signsRequests == true)
        let keyed = try read(base + #","request":{"url":"https://api.x","headers":{"Key":"{{token_secret}}"}},"sign_requests":false}}"#).get()
        #expect(keyed.normalisedOAuth1?.signsRequests == false)
        #expect(defects(base + #","sign_requests":false}}"#) == ["/oauth1/sign_requests: false needs a request block whose query or headers authorise calls"])
        #expect(defects(base + #","sign_requests":"no"}}"#) == ["/oauth1/sign_requests: must be true or false"])
    }

    @Test("access_token may export result fields from a nested part of its answer; no other endpoint may")
    func tokenExport() throws {
        let base = #"{"name":"E","url":"https://x","oauth2":{"authorize":"/a","access_token":"#
        let good = try read(base + #"{"url":"/t","export":{"api_endpoint":"installation.apiEndPoint"}}}}"#).get()
        #expect(good.oauth2?.accessToken.url == "https://x/t" && good.oauth2?.accessToken.method == "POST")
        #expect(good.oauth2?.accessToken.export.keys.sorted() == ["api_endpoint"])
        #expect(try read(base + #""/t"}}"#).get().oauth2?.accessToken.export.isEmpty == true)
        #expect(defects(base + #"{"url":"/t","export":{}}}}"#) == ["/oauth2/access_token/export: required: an object naming the result fields the token answer adds"])
        #expect(defects(base + #"{"url":"/t","export":{"a":"a["}}}}"#).count == 1)
        #expect(defects(base + #""/t","refresh":{"url":"/t","export":{"a":"a"}}}}"#) == ["/oauth2/refresh/export: unknown key"])
        #expect(defects(#"{"name":"O","url":"https://x","oauth1":{"request_token":"/r","authorize":"/a","access_token":{"url":"/t","export":{"a":"a"}}}}"#)
            == ["/oauth1/access_token/export: unknown key"])
    }

    @Test("a lookup is an endpoint plus the fields it exports to the login result")
    func lookup() throws {
        let base = #"{"name":"L","url":"https://x","oauth2":{"authorize":"/a","access_token":"/t","lookup":"#
        let good = try read(base + #"{"url":"/meta","headers":{"Authorization":"OAuth {{token}}"},"export":{"api":"api_endpoint","n":{"first":["a","b"]}},"optional":true}}}"#).get()
        let lookup = try #require(good.oauth2?.lookup)
        #expect(lookup.endpoint.url == "https://x/meta" && lookup.endpoint.method == "GET" && lookup.optional)
        #expect(lookup.export.keys.sorted() == ["api", "n"])
        #expect(defects(base + #"{"url":"/meta"}}}"#) == ["/oauth2/lookup/export: required: an object naming the result fields the lookup adds"])
        #expect(defects(base + #"{"url":"/meta","export":{"a":"a"},"fields":{}}}}"#) == ["/oauth2/lookup/fields: unknown key"])
        #expect(defects(base + #"{"url":"{{host}}/meta","hosts":["https://x"],"export":{"a":"a"}}}}"#).sorted() == [
            "/oauth2/lookup/hosts: only request and OAuth 2 access_token, refresh and revoke endpoints may list hosts",
            "/oauth2/lookup/url: a flow value ({{…}}) cannot choose the host unless the endpoint lists the hosts it may name",
        ])
    }

    @Test("a login-named origin renders only when a listed host admits it")
    func learnedOrigin() {
        let hosts = ["https://*.salesforce.com", "https://www.zohoapis.eu", "http://127.0.0.1:8080"].compactMap(APIHost.init)
        func render(_ template: String, _ value: String?) -> APIURL {
            Template.renderAPIURL(template, TemplateContext(flow: value.map { ["instance_url": $0] } ?? [:]), hosts: hosts)
        }
        #expect(render("{{instance_url}}/services/{{token}}", "https://NA1.Salesforce.com/") == .url("https://na1.salesforce.com/services/"))
        #expect(render("{{ instance_url }}", "https://a.my.salesforce.com") == .url("https://a.my.salesforce.com"))
        #expect(render("https://{{instance_url}}/v4", "www.zohoapis.eu") == .url("https://www.zohoapis.eu/v4"))
        #expect(render("{{instance_url}}", "http://127.0.0.1:8080") == .url("http://127.0.0.1:8080"))
        #expect(render("{{instance_url}}", "https://na1.salesforce.com:443") == .url("https://na1.salesforce.com"), "the scheme's own port")
        // A path after the admitted origin is kept: the caller could reach it through /request anyway.
        #expect(render("{{instance_url}}/x", "https://a.salesforce.com/20418377/") == .url("https://a.salesforce.com/20418377/x"))
        #expect(render("{{instance_url}}/x", nil) == .missing(field: "instance_url"))
        #expect(render("{{instance_url}}/x", "") == .missing(field: "instance_url"))
        for refused in [
            "https://salesforce.com", "http://na1.salesforce.com", "https://na1.salesforce.com.evil.example", "https://evilsalesforce.com",
            "https://na1.salesforce.com:444", "https://x@na1.salesforce.com", "https://na1.salesforce.com/a/../b", "https://na1.salesforce.com?q",
            "https://na1.salesforce.com/a%2f..", "https://na1.salesforce.com/a?b", "https://na1.salesforce.com/./a", "https://na1.salesforce.com//a",
            "https://evil.example/na1.salesforce.com", "https://evil.example#/na1.salesforce.com",
            "https://*.salesforce.com", "https://www.zohoapis.eu.", "http://127.0.0.1", "https://na1.salesforce.com%2f", "na1.salesforce.com",
        ] {
            #expect(render("{{instance_url}}/x", refused) == .notAdmitted(fields: ["instance_url"]), "\(refused)")
        }
        #expect(render("https://{{instance_url}}/x", "www.zohoapis.eu/evil") == .notAdmitted(fields: ["instance_url"]))
        #expect(render("https://{{instance_url}}/x", "https://www.zohoapis.eu") == .notAdmitted(fields: ["instance_url"]))
        // A host built of several flow values and fixed text (ShareFile's subdomain and control plane).
        let sharefile = ["https://*.sharefile.com", "https://*.sf-api.com"].compactMap(APIHost.init)
        func compose(_ template: String, _ flow: [String: String]) -> APIURL {
            Template.renderAPIURL(template, TemplateContext(flow: flow), hosts: sharefile)
        }
        let both = "https://{{subdomain}}.{{apicp}}/oauth/token"
        #expect(compose(both, ["subdomain": "Acme", "apicp": "sharefile.com"]) == .url("https://acme.sharefile.com/oauth/token"))
        #expect(compose("https://{{subdomain}}.sf-api.com/sf/v3", ["subdomain": "acme"]) == .url("https://acme.sf-api.com/sf/v3"))
        #expect(compose(both, ["subdomain": "acme"]) == .missing(field: "apicp"))
        for (subdomain, apicp) in [
            ("acme", "evil.example"), ("evil.example/", "sharefile.com"), ("acme", "sharefile.com:444"), ("x@evil.example#", "sharefile.com"),
            ("acme", "sharefile.com.evil.example"), ("", "sharefile.com"), ("acme", "*.sharefile.com"), ("a%2f", "sharefile.com"),
            ("acme", "sharefile.com/x"), ("acme", "sharefile.com?"),
        ] {
            #expect(compose(both, ["subdomain": subdomain, "apicp": apicp]) != .url("https://\(subdomain).\(apicp)/oauth/token"), "\(subdomain) \(apicp)")
            if !subdomain.isEmpty {
                #expect(compose(both, ["subdomain": subdomain, "apicp": apicp]) == .notAdmitted(fields: ["subdomain", "apicp"]), "\(subdomain) \(apicp)")
            }
        }
        // Without hosts, the value is one encoded value, never an origin.
        #expect(Template.renderAPIURL("https://x/{{instance_url}}", TemplateContext(flow: ["instance_url": "a/b"]), hosts: []) == .url("https://x/a%2Fb"))
    }

    @Test("a template naming an undeclared parameter is a defect")
    func undeclaredParameter() {
        let found = defects(#"{"name":"D","oauth2":{"authorize":{"url":"https://x/a","query":{"tenant":"{tenant}"}},"access_token":"https://x/t"}}"#)
        #expect(found == ["/oauth2/authorize/query/tenant: {tenant} is not a declared parameter"])
    }

    @Test("a provider needs a login block")
    func needsBlock() {
        #expect(defects(#"{"name":"Nothing"}"#) == ["/: a provider needs an oauth2, oauth1 or native block"])
    }

    @Test("the shipped providers all validate")
    func shipped() throws {
        let directory = String(#filePath.dropLast("Tests/ProviderEngineTests/DefinitionTests.swift".count)) + "providers"
        let catalog = ProviderCatalog(directories: [directory])
        #expect(catalog.defects == [])
        for id in ["apple", "emay", "facebook", "github", "google"] {
            #expect(catalog.contains(id), "\(id)")
        }
        #expect(catalog.definition("google")?.normalisedOAuth2?.pkce == .s256)
        #expect(catalog.definition("myanimelist")?.normalisedOAuth2?.authorize.query?["code_challenge_method"] == "plain")
        #expect(catalog.definition("google")?.openid?.issuer == "https://accounts.google.com")
        let carriers = ["aliyun-dypns", "cmcc", "emay", "geetest-onelogin", "jverification", "mobtech", "netease-yidun", "shanyan", "tencent-rapidauth"]
        for id in carriers {
            #expect(catalog.definition(id)?.carrier != nil, "\(id)")
        }
        #expect(catalog.definition("apple")?.carrier == nil)
        #expect(catalog.definition("emay")?.carrier?.request.body?.transforms.count == 2)
        // The request endpoints' flow fields are worked out once, as `requiredFields` would give them.
        var named = 0
        for entry in catalog.all {
            let definition = entry.definition
            let oauth2 = definition.normalisedOAuth2?.request.map(ProviderDefinition.requiredFields) ?? []
            let oauth1 = definition.normalisedOAuth1?.request.map(ProviderDefinition.requiredFields) ?? []
            #expect(definition.requestFlowFields == .init(oauth2: oauth2, oauth1: oauth1), "\(definition.id)")
            if !oauth2.isEmpty || !oauth1.isEmpty { named += 1 }
        }
        #expect(named > 0, "some shipped request endpoint needs a flow value (instance_url and the like)")
        // Tenant issuers come from the keyset, through defaults that may name other defaults.
        let tenants: [(String, JSONObject, String)] = [
            ("pingaic", ["domain": "openam-acme.forgeblocks.com"], "https://openam-acme.forgeblocks.com/am/oauth2/realms/root/realms/alpha"),
            ("pingaic", ["domain": "id.acme.example", "realm": "bravo"], "https://id.acme.example/am/oauth2/realms/root/realms/bravo"),
            ("sapias", ["tenant": "acme"], "https://acme.accounts.ondemand.com"),
            ("janssen", ["domain": "login.acme.example"], "https://login.acme.example"),
            ("duosso", ["sso_host": "sso-1a2b.sso.duosecurity.com", "client_id": "DIX"], "https://sso-1a2b.sso.duosecurity.com/oidc/DIX"),
            ("sapias", ["tenant": "acme", "issuer": "https://login.acme.example"], "https://login.acme.example"),
        ]
        for (id, keyset, issuer) in tenants {
            let definition = try #require(catalog.definition(id))
            let openid = try #require(definition.openid)
            #expect(openid.rendered(TemplateContext(keyset: keyset, parameters: definition.oauth2?.parameters ?? [:])).issuer == issuer, "\(id)")
        }
    }

    @Test("the worked carrier example in docs/providers.md is a valid definition")
    func workedExample() throws {
        let path = String(#filePath.dropLast("Tests/ProviderEngineTests/DefinitionTests.swift".count)) + "docs/providers.md"
        let text = String(decoding: FileSystem.read(path) ?? [], as: UTF8.self)
        let section = try #require(text.split(separator: "### Worked example", maxSplits: 1).last)
        let block = try #require(section.split(separator: "```json", maxSplits: 1).last?.split(separator: "```", maxSplits: 1).first)
        let definition = try read(String(block), id: "vendor-x").get()
        #expect(definition.carrier?.response.errors["1002"] == .tokenUsed)
    }

    @Test("a carrier native block is read strictly, its defects under /native")
    func carrierDefects() {
        let found = defects(
            #"{"name":"C","native":{"kind":"carrier","secrets":["appKey"],"inputs":{"token":{"required":true}},"extra":1,"request":{"url":"/x","body":{"fields":[{"name":"a","value":{"op":"rot13"}},{"name":"b","value":"{{secret.other}}"}]}},"response":{"success":{"all":[{"path":"$.code","eq":0}]},"phone":{"path":"$.p"},"errors":{"1":"nope"}}}}"#)
        #expect(found.contains("/native/extra: unknown key"))
        #expect(found.contains("/native/request/body/fields/0/value/op: unknown operation 'rot13'"))
        #expect(found.contains("/native/request/body/fields/1/value: {{secret.other}}: 'other' is not in /secrets"))
        #expect(found.contains("/native/response/errors/1: unknown error class 'nope'"))
        #expect(defects(#"{"name":"N","native":{"kind":"fax"}}"#) == ["/native/kind: must be \"apple\" or \"carrier\""])
        #expect(defects(#"{"name":"N","native":{"kind":"apple","x":1}}"#) == ["/native/x: unknown key"])
    }

    @Test("later directories override earlier ones")
    func stacking() throws {
        let base = "/tmp/gatehouse-provider-stack-\(Int.random(in: 0..<1_000_000))"
        for (directory, name) in [("a", "First"), ("b", "Second")] {
            _ = FileSystem.makeDirectories("\(base)/\(directory)/demo")
            _ = FileSystem.createExclusively(
                "\(base)/\(directory)/demo/provider.json",
                bytes: Array(#"{"name":"\#(name)","oauth2":{"authorize":"https://x/a","access_token":"https://x/t"}}"#.utf8), mode: 0o644)
        }
        #expect(ProviderCatalog(directories: ["\(base)/a", "\(base)/b"]).definition("demo")?.name == "Second")
        #expect(ProviderCatalog(directories: ["\(base)/b", "\(base)/a"]).definition("demo")?.name == "First")
    }
}
