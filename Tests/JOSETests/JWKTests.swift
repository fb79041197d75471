import GatehouseCore
import GatehouseCrypto
import JOSE
import Testing

@Suite("JWK and JWK sets")
struct JWKTests {
    @Test("a mixed provider set keeps the usable signature keys and skips the rest")
    func mixedSet() throws {
        let document = """
            {"keys":[
              {"kty":"OKP","crv":"Ed25519","kid":"ed","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},
              {"kty":"oct","kid":"hmac","k":"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"},
              42,
              {"kid":"no-type"},
              {"kty":"RSA","kid":"a2","use":"sig","alg":"RS256","n":"\(RFC7515.A2.n)","e":"AQAB","x5c":["MIIC"]},
              {"kty":"RSA","kid":"enc","use":"enc","n":"\(RFC7515.A2.n)","e":"AQAB"},
              {"kty":"RSA","kid":"oaep","alg":"RSA-OAEP","n":"\(RFC7515.A2.n)","e":"AQAB"},
              {"kty":"RSA","kid":"wrong-alg","alg":"ES256","n":"\(RFC7515.A2.n)","e":"AQAB"},
              {"kty":"RSA","kid":"short","n":"AQAB","e":"AQAB"},
              {"kty":"EC","kid":"p521","crv":"P-521","x":"\(RFC7515.A3.x)","y":"\(RFC7515.A3.y)"},
              {"kty":"EC","kid":"a3","crv":"P-256","x":"\(RFC7515.A3.x)","y":"\(RFC7515.A3.y)","d":"jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"}
            ],"extra":true}
            """
        let set = try JWKSet.decode(Array(document.utf8))
        #expect(set.skippedCount == 4)
        #expect(set.keys.map(\.kid) == ["a2", "enc", "oaep", "wrong-alg", "short", "p521", "a3"])
        let keys = KeySet(set)
        #expect(keys.keys.map(\.kid) == ["a2", "a3"])
        #expect(keys.skippedCount == 9)
        #expect(keys.keys[0].algorithm == .rs256 && keys.keys[1].algorithm == nil)
        #expect(keys.contains(kid: "a3") && !keys.contains(kid: "enc"))
    }

    @Test("documents without a keys array are malformed", arguments: ["", "[]", "{}", #"{"keys":{}}"#, #"{"keys":"#])
    func notASet(text: String) {
        #expect(throws: JOSEError.malformed("")) { try JWKSet.decode(Array(text.utf8)) }
    }

    @Test("JWKs round-trip through PublicKey and JSON, for RSA and EC")
    func roundTrip() throws {
        let rsa = JWK(kty: .rsa, kid: "a2", n: RFC7515.A2.n, e: RFC7515.A2.e)
        #expect(try JWK(publicKey: rsa.publicKey(), kid: "a2") == JWK(kty: .rsa, kid: "a2", use: "sig", n: RFC7515.A2.n, e: "AQAB"))
        let ec = JWK(kty: .ec, kid: "a3", alg: "ES256", crv: "P-256", x: RFC7515.A3.x, y: RFC7515.A3.y)
        let published = try JWK(publicKey: ec.publicKey(), kid: "a3", alg: .es256)
        #expect(published == JWK(kty: .ec, kid: "a3", alg: "ES256", use: "sig", crv: "P-256", x: RFC7515.A3.x, y: RFC7515.A3.y))
        let json = String(decoding: try JSONCoding.encode(JWKSet(keys: [published])), as: UTF8.self)
        #expect(json == #"{"keys":[{"alg":"ES256","crv":"P-256","kid":"a3","kty":"EC","use":"sig","x":"\#(RFC7515.A3.x)","y":"\#(RFC7515.A3.y)"}]}"#)
        #expect(try JWKSet.decode(Array(json.utf8)).keys == [published])
    }

    @Test("missing, non-canonical or unacceptable members give invalidKey")
    func invalidMembers() {
        let cases = [
            JWK(kty: .rsa, n: RFC7515.A2.n),
            JWK(kty: .rsa, n: RFC7515.A2.n, e: "AQAB="),
            JWK(kty: .rsa, n: String(RFC7515.A2.n.dropLast()) + "R", e: "AQAB"),
            JWK(kty: .rsa, n: "AQAB", e: "AQAB"),
            JWK(kty: .ec, crv: "P-256", x: RFC7515.A3.x),
            JWK(kty: .ec, crv: "secp256k1", x: RFC7515.A3.x, y: RFC7515.A3.y),
            JWK(kty: .ec, crv: "P-256", x: RFC7515.A3.y, y: RFC7515.A3.x),
        ]
        for jwk in cases {
            #expect(throws: JOSEError.invalidKey("")) { try jwk.publicKey() }
        }
        #expect(throws: JOSEError.unsupportedAlgorithm("")) { try JWK(kty: .rsa, alg: "HS256").signatureAlgorithm() }
    }
}
