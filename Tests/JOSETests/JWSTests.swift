import GatehouseCore
import GatehouseCrypto
import JOSE
import Testing

@Suite("Compact JWS")
struct JWSTests {
    let rsaKey: PublicKey
    let ecKey: PublicKey

    init() throws {
        rsaKey = try JWK(kty: .rsa, n: RFC7515.A2.n, e: RFC7515.A2.e).publicKey()
        ecKey = try JWK(kty: .ec, crv: "P-256", x: RFC7515.A3.x, y: RFC7515.A3.y).publicKey()
    }

    @Test("RFC 7515 A.2: the RS256 example verifies with its published JWK")
    func rfc7515A2() throws {
        #expect(rsaKey.kind == .rsa(bits: 2048))
        let jws = try JWS(compact: RFC7515.A2.token, allowedAlgorithms: [.rs256])
        #expect(jws.header.alg == .rs256 && jws.header.kid == nil && jws.header.typ == nil)
        #expect(jws.signature == RFC7515.A2.signatureOctets)
        #expect(jws.payload == Array(RFC7515.payloadText.utf8))
        #expect(jws.signingInput == Array((RFC7515.A2.header + "." + RFC7515.payload).utf8))
        #expect(jws.isSignatureValid(with: rsaKey))
        #expect(!jws.isSignatureValid(with: ecKey))
    }

    @Test("RFC 7515 A.3: the ES256 example verifies with its published JWK")
    func rfc7515A3() throws {
        #expect(Base64URL.decode(RFC7515.A3.x) == RFC7515.A3.xOctets)
        #expect(Base64URL.decode(RFC7515.A3.y) == RFC7515.A3.yOctets)
        let jws = try JWS(compact: RFC7515.A3.token, allowedAlgorithms: [.es256])
        #expect(jws.header.alg == .es256)
        #expect(jws.signature == RFC7515.A3.rOctets + RFC7515.A3.sOctets)
        #expect(jws.isSignatureValid(with: ecKey))
        #expect(!jws.isSignatureValid(with: rsaKey))
        let otherKey = try PrivateKey(pem: TestKeys.first).publicKey
        #expect(!jws.isSignatureValid(with: otherKey))
    }

    @Test("changing a middle character of the payload or the signature breaks verification")
    func tampering() throws {
        for (token, key, algorithm) in [(RFC7515.A2.token, rsaKey, SignatureAlgorithm.rs256), (RFC7515.A3.token, ecKey, .es256)] {
            let parts = token.split(separator: ".").map(String.init)
            for part in [1, 2] {
                var characters = Array(parts[part])
                let middle = characters.count / 2
                characters[middle] = characters[middle] == "A" ? "B" : "A"
                var changed = parts
                changed[part] = String(characters)
                let jws = try JWS(compact: changed.joined(separator: "."), allowedAlgorithms: [algorithm])
                #expect(!jws.isSignatureValid(with: key), "part \(part) of \(algorithm)")
            }
        }
    }

    @Test("alg none, HMAC and algorithms outside the allowed list are refused before any key is used")
    func algorithms() throws {
        let none = Base64URL.encode(Array("{\"alg\":\"none\"}".utf8)) + "." + RFC7515.payload
        #expect(throws: JOSEError.unsupportedAlgorithm("")) { try JWS(compact: none + ".", allowedAlgorithms: Set(SignatureAlgorithm.allCases)) }
        #expect(throws: JOSEError.unsupportedAlgorithm("")) {
            try JWS(compact: none + "." + RFC7515.A2.signature, allowedAlgorithms: Set(SignatureAlgorithm.allCases))
        }
        #expect(throws: JOSEError.unsupportedAlgorithm("")) {
            try JWS(compact: RFC7515.a1HS256Token, allowedAlgorithms: Set(SignatureAlgorithm.allCases))
        }
        #expect(throws: JOSEError.unsupportedAlgorithm("")) { try JWS(compact: RFC7515.A3.token, allowedAlgorithms: [.rs256]) }
        #expect(throws: JOSEError.unsupportedAlgorithm("")) { try JWS(compact: RFC7515.A2.token, allowedAlgorithms: []) }
    }

    @Test("non-canonical base64url is refused in every part")
    func nonCanonicalBase64() {
        let a2 = RFC7515.A2.self
        // A.2's signature ends in "w" and its payload in "Q": both carry 4 unused low bits, so
        // the next letter decodes to the same bytes in a lenient decoder.
        let cases = [
            a2.header + "." + RFC7515.payload + "." + a2.signature.dropLast() + "x",
            a2.header + "." + RFC7515.payload.dropLast() + "R" + "." + a2.signature,
            a2.header + "=." + RFC7515.payload + "." + a2.signature,
            a2.header + "." + RFC7515.payload + "." + a2.signature + "==",
            a2.header + "." + RFC7515.payload + "." + a2.signature.replacing("-", with: "+"),
            a2.header + "." + RFC7515.payload + " ." + a2.signature,
        ]
        for token in cases {
            #expect(throws: JOSEError.malformed("")) { try JWS(compact: token, allowedAlgorithms: [.rs256]) }
        }
    }

    @Test("wrong shapes, oversized tokens and odd headers are malformed")
    func shapes() {
        let a2 = RFC7515.A2.self
        func header(_ json: String) -> String { Base64URL.encode(Array(json.utf8)) + "." + RFC7515.payload + "." + a2.signature }
        let cases = [
            "", ".", "..", a2.header + "." + RFC7515.payload, a2.token + ".", a2.token + "." + a2.signature,
            a2.header + "." + RFC7515.payload + ".",
            header("[]"), header("{\"alg\":\"RS256\""), header("{\"alg\":256}"), header("{}"),
            header("{\"alg\":\"RS256\",\"alg\":\"none\"}"),
            header("{\"alg\":\"RS256\",\"kid\":7}"),
            header("{\"alg\":\"RS256\",\"typ\":[\"JWT\"]}"),
            header("{\"alg\":\"RS256\",\"crit\":[\"exp\"],\"exp\":1}"),
            String(repeating: "A", count: 20_000) + "." + RFC7515.payload + "." + a2.signature,
        ]
        for token in cases {
            #expect(throws: JOSEError.malformed("")) { try JWS(compact: token, allowedAlgorithms: [.rs256]) }
        }
        #expect(throws: JOSEError.malformed("")) { try JWS(compact: a2.token, allowedAlgorithms: [.rs256], maximumLength: 100) }
    }

    @Test("keyID reads the kid without verifying, and nil for anything else")
    func keyID() throws {
        let key = try PrivateKey(pem: TestKeys.first)
        let token = try TestKeys.token(header: "{\"alg\":\"ES256\",\"kid\":\"key-1\",\"typ\":\"JWT\"}", claims: "{}", key: key)
        #expect(JWS.keyID(of: token) == "key-1")
        let jws = try JWS(compact: token, allowedAlgorithms: [.es256])
        #expect(jws.header.kid == "key-1" && jws.header.typ == "JWT")
        #expect(jws.header.raw["typ"] == "JWT")
        #expect(JWS.keyID(of: RFC7515.A2.token) == nil)
        #expect(JWS.keyID(of: "not a token") == nil)
    }
}
