import GatehouseCore
import GatehouseCrypto
import JOSE

/// Two P-256 keys made once with `openssl genpkey -algorithm EC -pkeyopt
/// ec_paramgen_curve:P-256` for these tests only, and helpers that mint tokens with them.
enum TestKeys {
    static let first = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgtWUivs95x+NVoMEp
        u9JE6gJefQPTC+LuEZ60hTP83nuhRANCAATDCANfq4RDmK17tQAzP14wBsUJnqIw
        tOmgHv7Z+PoTVi4JKwz2i/FdPEM9oxwJo8iD6NGm0MYhII+rSUdBBN6+
        -----END PRIVATE KEY-----
        """

    static let second = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg8BxboI0fGOfPMnbv
        ORGdOgcAT8UvqNJtzyvgVlVsNPKhRANCAAR4VcdjxaxUZk2lZKQOfiOaezO4/YiD
        jEnZ5f3Y/s95Tx+hsHj8POrnf7+xtBMAXVkdGNNYas/lLs5Q0+BxzYiy
        -----END PRIVATE KEY-----
        """

    /// A compact JWS over `header` and `claims` (both JSON text) signed by `key`.
    static func token(header: String, claims: String, key: PrivateKey, algorithm: SignatureAlgorithm = .es256) throws -> String {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        let signature = try key.sign(message: Array(input.utf8), algorithm: algorithm)
        return input + "." + Base64URL.encode(signature)
    }

    /// JSON text for a claims object.
    static func json(_ object: JSONObject) throws -> String {
        String(decoding: try JSONCoding.encode(JSONValue.object(object)), as: UTF8.self)
    }

    /// A JWKS document publishing `keys` under their kids.
    static func jwks(_ keys: [(kid: String, key: PublicKey)]) throws -> [UInt8] {
        let set = JWKSet(keys: try keys.map { try JWK(publicKey: $0.key, kid: $0.kid) })
        return try JSONCoding.encode(set)
    }
}
