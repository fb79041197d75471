import GatehouseCore
import GatehouseCrypto
import JOSE
import GatehouseTestSupport
import Testing

@Suite("RS256 tokens signed by the openssl command line")
struct RSAInteropTests {
    @Test("a JWT signed with openssl dgst verifies through a JWK made from the key's modulus")
    func opensslSignedJWT() throws {
        let tool = try OpenSSLTool()
        try tool.run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "rsa.pem"])
        let modulusLine = try tool.run(["rsa", "-in", "rsa.pem", "-noout", "-modulus"])
        let hex = Array(try #require(modulusLine.split(separator: "=").last).filter(\.isHexDigit).utf8)
        let modulus = stride(from: 0, to: hex.count, by: 2).compactMap { UInt8(String(decoding: hex[$0..<($0 + 2)], as: UTF8.self), radix: 16) }
        #expect(modulus.count == 256)
        let jwks = #"{"keys":[{"kty":"RSA","kid":"cli","alg":"RS256","use":"sig","n":"\#(Base64URL.encode(modulus))","e":"AQAB"}]}"#
        let keys = KeySet(try JWKSet.decode(Array(jwks.utf8)))

        let now: Int64 = 1_700_000_000
        let header = Base64URL.encode(Array(#"{"alg":"RS256","kid":"cli","typ":"JWT"}"#.utf8))
        let claims = #"{"iss":"https://cli.example","aud":"gatehouse","sub":"u1","iat":1700000000,"exp":1700000600}"#
        let signingInput = header + "." + Base64URL.encode(Array(claims.utf8))
        try tool.write("input.txt", Array(signingInput.utf8))
        try tool.run(["dgst", "-sha256", "-sign", "rsa.pem", "-out", "sig.bin", "input.txt"])
        let token = signingInput + "." + Base64URL.encode(try tool.read("sig.bin"))

        let verifier = JWTVerifier(issuer: "https://cli.example", audience: "gatehouse", now: { now })
        let verified = try verifier.verify(token, keys: keys)
        #expect(verified.sub == "u1" && verified.exp == 1_700_000_600)

        var characters = Array(token)
        let middle = signingInput.count + (characters.count - signingInput.count) / 2
        characters[middle] = characters[middle] == "A" ? "B" : "A"
        #expect(throws: JOSEError.badSignature("")) { try verifier.verify(String(characters), keys: keys) }
        #expect(throws: JOSEError.unknownKey("")) {
            try verifier.verify(token, keys: KeySet(try JWKSet.decode(Array(RFC7515.A2.jwks.utf8))))
        }
    }
}
