import GatehouseCore
import JOSE
import Testing

@Suite("Payload JSON")
struct JSONStrictnessTests {
    func claims(_ text: String) throws(JOSEError) -> JWTClaims {
        try JWTClaims(payload: Array(text.utf8))
    }

    @Test("typed claims, string-or-array aud and bool-or-string email_verified")
    func typed() throws {
        let parsed = try claims(
            #"{"iss":"https://appleid.apple.com","sub":"000723.abc","aud":"com.example.app","exp":1700000600.9,"iat":1700000000,"#
                + #""nonce":"n-0S6","email":"a@privaterelay.appleid.com","email_verified":"true","is_private_email":"false","#
                + #""real_user_status":2,"nested":{"list":[1,2.5,-3e2,true,null,"\u00e9\ud83d\ude00\n\"\\\/"]}}"#)
        #expect(parsed.iss == "https://appleid.apple.com" && parsed.sub == "000723.abc")
        #expect(parsed.aud == ["com.example.app"])
        #expect(parsed.exp == 1_700_000_600 && parsed.iat == 1_700_000_000 && parsed.nbf == nil)
        #expect(parsed.nonce == "n-0S6" && parsed.email == "a@privaterelay.appleid.com")
        #expect(parsed.emailVerified == true)
        #expect(parsed.flag("is_private_email") == false)
        #expect(parsed.raw["real_user_status"] == 2)
        #expect(parsed.raw["nested"]?["list"] == [1, .number(2.5), .number(-300), true, nil, "é😀\n\"\\/"])

        #expect(try claims(#"{"aud":["a","b"],"email_verified":false}"#).aud == ["a", "b"])
        #expect(try claims(#"{"email_verified":true}"#).emailVerified == true)
        #expect(try claims(#"{"email_verified":"false"}"#).emailVerified == false)
        #expect(try claims(#"{"email_verified":"yes"}"#).emailVerified == nil)
        #expect(try claims(" {} ").aud == [])
    }

    @Test("registered claims of the wrong type are malformed", arguments: [
        #"{"iss":1}"#, #"{"sub":null}"#, #"{"aud":5}"#, #"{"aud":["a",1]}"#, #"{"exp":"1700000000"}"#,
        #"{"nbf":true}"#, #"{"iat":1e300}"#, #"{"nonce":["x"]}"#, #"[]"#, #""claims""#,
    ])
    func wrongTypes(text: String) {
        #expect(throws: JOSEError.malformed("")) { try claims(text) }
    }

    @Test("JSON that a lenient parser would accept is refused", arguments: [
        #"{"iss":"a","iss":"b"}"#, #"{"a":1,}"#, #"{"a":[1,]}"#, #"{'a':1}"#, #"{"a":01}"#, #"{"a":+1}"#, #"{"a":.5}"#,
        #"{"a":1.}"#, #"{"a":NaN}"#, #"{"a":Infinity}"#, #"{"a":"\ud800"}"#, #"{"a":"\udc00x"}"#, #"{"a":"\x"}"#,
        "{\"a\":\"tab\there\"}", #"{"a":1} {}"#, #"{"a":tru}"#, #"{"a" 1}"#, #"{"a":1"#, "", " ",
        String(repeating: "[", count: 40) + String(repeating: "]", count: 40),
    ])
    func lenientJSON(text: String) {
        #expect(throws: JOSEError.malformed("")) { try claims(text) }
    }

    @Test("invalid UTF-8 inside a string is refused")
    func invalidUTF8() {
        #expect(throws: JOSEError.malformed("")) { try JWTClaims(payload: Array(#"{"sub":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)) }
        #expect(throws: JOSEError.malformed("")) { try JWTClaims(payload: Array(#"{"sub":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8)) }
    }
}
