import Carrier
import GatehouseCore
import ProviderEngine
import Testing

private func defects(_ json: String) -> [String] {
    if case .failure(let failure) = read(json) { return failure.defects.map(\.description) }
    return []
}

@Suite("Templates and defaults")
struct TemplateTests {
    @Test("keyset and flow values, lists with their separator, base64 blocks")
    func render() {
        let context = TemplateContext(
            keyset: ["client_id": "id 1", "client_secret": "s", "scope": ["a", "b"], "undeclared": "x"],
            parameters: ["client_id": Parameter(), "client_secret": Parameter(), "scope": Parameter(separator: ",", cardinality: "*")],
            flow: ["state": "S", "callback": "https://gw/auth"])
        #expect(Template.render("{client_id}|{scope}|{{state}}|{{ state }}|{undeclared}|{{missing}}", context) == "id 1|a,b|S|S||")
        #expect(Template.render("Basic !BASE64{client_id}:{client_secret}!BASE64", context) == "Basic aWQgMTpz")
        #expect(Template.render("no templates {here", context) == "no templates {here")
        #expect(Template.references(in: "{a}{{b}}x{{ c }}") == (keyset: ["a"], flow: ["b", "c"]))
    }

    @Test("a template that is one reference alone renders as the same reference inside text does")
    func soleReference() {
        let context = TemplateContext(
            keyset: ["client_id": "id&1", "scope": ["a", "b"]], parameters: ["client_id": Parameter(), "scope": Parameter(separator: " ")],
            flow: ["code": "c/1", "state": "S"])
        for template in ["{client_id}", "{scope}", "{{code}}", "{{ state }}", "{ client_id }", "{{missing}}", "{missing}", "{{code}", "{client_id}}",
            "{{}}", "{ }", "{}}", "{a{b}", "{{a}b}}", "{{x!}}", "{{{code}}}", "{{code}}}"]
        {
            #expect(Template.render(template, context) == String(Template.render("<" + template + ">", context).dropFirst().dropLast()), "\(template)")
            #expect(Template.renderURL(template, context) == String(Template.renderURL("<" + template + ">", context).dropFirst().dropLast()), "\(template)")
        }
        #expect(Template.render("{scope}", context) == "a b")
        #expect(Template.renderURL("{{code}}", context) == "c%2F1")
        #expect(Template.render("{{code}", context) == "{{code}")
    }

    @Test("a default may name other keyset values; those are read with their own defaults as written, never chased")
    func derivedDefaults() {
        let parameters: [String: Parameter] = [
            "domain": Parameter(), "issuer": Parameter(defaultValue: "https://{domain}/"), "audience": Parameter(defaultValue: "{issuer}api"),
        ]
        let derived = TemplateContext(keyset: ["domain": "acme.example"], parameters: parameters)
        #expect(derived.keysetValue("issuer") == "https://acme.example/")
        #expect(derived.keysetValue("audience") == "api", "a default naming a derived default gets no value for it")
        let overridden = TemplateContext(keyset: ["domain": "acme.example", "issuer": "https://login.acme.example"], parameters: parameters)
        #expect(overridden.keysetValue("issuer") == "https://login.acme.example")
        #expect(Template.render("{issuer}/keys", overridden) == "https://login.acme.example/keys")
    }

    @Test("in a URL, flow values are one percent-encoded value each; the operator's keyset values go in as they are")
    func renderURL() {
        let context = TemplateContext(
            keyset: ["domain": "tenant.example.com/v2"], parameters: ["domain": Parameter()],
            flow: ["code": "x&client_id=evil#f", "token": "../admin", "user_id": "42"])
        #expect(Template.renderURL("https://{domain}/users/{{user_id}}/t/{{token}}?code={{code}}", context)
            == "https://tenant.example.com/v2/users/42/t/..%2Fadmin?code=x%26client_id%3Devil%23f")
        #expect(Template.render("{{code}}", context) == "x&client_id=evil#f", "elsewhere the value is encoded once, where it is placed")
        let secret = TemplateContext(
            keyset: ["domain": "h.example:8443", "client_secret": "a&b=c d"], parameters: ["domain": Parameter(), "client_secret": Parameter()])
        #expect(Template.renderURL("https://{domain}/t?secret={client_secret}", secret) == "https://h.example:8443/t?secret=a%26b%3Dc%20d",
            "in the query a keyset value is one value too")
    }

    @Test("OAuth.io defaults: queries, PKCE, nonce, scope and the callback state")
    func defaults() throws {
        let plain = try read(#"{"name":"P","oauth2":{"authorize":"https://x/a","access_token":"https://x/t","request":"https://api.x"}}"#).get()
        let oauth2 = try #require(plain.normalisedOAuth2)
        #expect(oauth2.authorize.query == ["client_id": "{client_id}", "response_type": "code", "redirect_uri": "{{callback}}", "state": "{{state}}"])
        #expect(oauth2.accessToken.query?["grant_type"] == "authorization_code")
        #expect(oauth2.request?.headers == ["Authorization": "Bearer {{token}}"])
        #expect(!plain.callbackCarriesState)

        let rich = try read(
            #"{"name":"R","oauth2":{"authorize":"https://x/a","access_token":"https://x/t","pkce":true,"parameters":{"client_id":"string","client_secret":"string","scope":{"values":{"openid":""}}}},"openid":{"issuer":"https://x","jwks_uri":"https://x/jwks"}}"#
        ).get()
        let normalised = try #require(rich.normalisedOAuth2)
        #expect(normalised.authorize.query?["scope"] == "{scope}")
        #expect(normalised.authorize.query?["code_challenge_method"] == "S256")
        #expect(normalised.authorize.query?["nonce"] == "{{nonce}}")
        #expect(normalised.accessToken.query?["code_verifier"] == "{{code_verifier}}")

        let stateless = try read(#"{"name":"N","oauth2":{"authorize":{"url":"https://x/a","query":{"client_id":"{client_id}"}},"access_token":"https://x/t"}}"#).get()
        #expect(stateless.callbackCarriesState)
    }

    @Test("pkce is true, false or the method by name; plain only when asked for")
    func pkceMethods() throws {
        func method(_ pkce: String) throws -> PKCEMethod? {
            try read(#"{"name":"P","oauth2":{"authorize":"https://x/a","access_token":"https://x/t","pkce":\#(pkce)}}"#).get().oauth2?.pkce
        }
        #expect(try method("true") == .s256)
        #expect(try method(#""S256""#) == .s256)
        #expect(try method(#""plain""#) == .plain)
        #expect(try method("false") == nil)
        let plain = try read(#"{"name":"P","oauth2":{"authorize":"https://x/a","access_token":"https://x/t","pkce":"plain"}}"#).get()
        #expect(plain.normalisedOAuth2?.authorize.query?["code_challenge_method"] == "plain")
        #expect(plain.normalisedOAuth2?.accessToken.query?["code_verifier"] == "{{code_verifier}}")
        for bad in [#""s256""#, #""S512""#, "1"] {
            #expect(defects(#"{"name":"P","oauth2":{"authorize":"https://x/a","access_token":"https://x/t","pkce":\#(bad)}}"#)
                == [#"/oauth2/pkce: must be true, false, "S256" or "plain""#])
        }
    }

    @Test("request.required lists the flow values the SDK must echo")
    func required() {
        let endpoint = Endpoint(url: "{{instance_url}}/api", headers: ["Authorization": "Bearer {{token}}"])
        #expect(ProviderDefinition.requiredFields(of: endpoint) == ["instance_url"])
    }
}

@Suite("OAuth 1.0a signatures")
struct OAuth1Tests {
    @Test("the signature base string of RFC 5849 §3.4.1.1")
    func baseString() {
        let parameters = [
            FormField(name: "c2", value: ""), FormField(name: "a3", value: "2 q"),
            FormField(name: "oauth_consumer_key", value: "9djdj82h48djs9d2"), FormField(name: "oauth_token", value: "kkk9d7dh3k39sjv7"),
            FormField(name: "oauth_signature_method", value: "HMAC-SHA1"), FormField(name: "oauth_timestamp", value: "137131201"),
            FormField(name: "oauth_nonce", value: "7d8f3e4a"), FormField(name: "oauth_signature", value: "ignored"),
        ]
        let base = OAuth1Signer.baseString(method: "post", url: "http://EXAMPLE.COM:80/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b", parameters: parameters)
        #expect(
            base
                == "POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7"
        )
    }

    @Test("the signature of RFC 5849 §3.4.2's example")
    func signature() {
        let signer = OAuth1Signer(consumerKey: "9djdj82h48djs9d2", consumerSecret: "j49sk3j29djd", token: "kkk9d7dh3k39sjv7", tokenSecret: "dh893hdasih9")
        let oauth = [
            "oauth_consumer_key": "9djdj82h48djs9d2", "oauth_token": "kkk9d7dh3k39sjv7", "oauth_signature_method": "HMAC-SHA1",
            "oauth_timestamp": "137131201", "oauth_nonce": "7d8f3e4a",
        ]
        let signature = signer.signature(
            method: "POST", url: "http://example.com/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b",
            parameters: [FormField(name: "c2", value: ""), FormField(name: "a3", value: "2 q")], oauth: oauth)
        #expect(signature == "r6/TJjbCOr97/+UU0NsvSne7s5g=")
    }
}
