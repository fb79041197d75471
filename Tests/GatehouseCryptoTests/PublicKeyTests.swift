import GatehouseCore
import GatehouseCrypto
import GatehouseTestSupport
import Testing

@Suite("Public key import")
struct PublicKeyTests {
    // RFC 7515 Appendix A.3's P-256 key, as the byte arrays printed there.
    static let x: [UInt8] = [
        127, 205, 206, 39, 112, 246, 196, 93, 65, 131, 203, 238, 111, 219, 75, 123,
        88, 7, 51, 53, 123, 233, 239, 19, 186, 207, 110, 60, 123, 209, 84, 69,
    ]
    static let y: [UInt8] = [
        199, 241, 68, 205, 27, 189, 155, 126, 135, 44, 223, 237, 185, 238, 185, 244,
        179, 105, 93, 110, 169, 11, 36, 173, 138, 70, 35, 40, 133, 136, 229, 173,
    ]

    @Test("an EC key built from x and y exports the same coordinates")
    func ecComponents() throws {
        let key = try PublicKey(curve: .p256, x: Self.x, y: Self.y)
        #expect(key.kind == .ec(.p256))
        #expect(key.supports(.es256) && !key.supports(.es384) && !key.supports(.rs256))
        #expect(try key.components() == .ec(curve: .p256, x: Self.x, y: Self.y))
    }

    @Test("points off the curve, short coordinates and the wrong curve are refused")
    func ecRejections() {
        var offCurve = Self.y
        offCurve[31] ^= 0x01
        #expect(throws: CryptoError.invalidKey("")) { try PublicKey(curve: .p256, x: Self.x, y: offCurve) }
        #expect(throws: CryptoError.invalidKey("")) { try PublicKey(curve: .p256, x: Array(Self.x.dropFirst()), y: Self.y) }
        #expect(throws: CryptoError.invalidKey("")) { try PublicKey(curve: .p384, x: Self.x, y: Self.y) }
        #expect(throws: CryptoError.invalidKey("")) { try PublicKey(curve: .p256, x: [], y: []) }
    }

    @Test("RSA keys: PEM and DER SubjectPublicKeyInfo agree with the modulus; small moduli and bad exponents are refused")
    func rsaImport() throws {
        let tool = try OpenSSLTool()
        _ = try tool.makeRSAKey("rsa.pem")
        try tool.run(["pkey", "-in", "rsa.pem", "-pubout", "-out", "pub.pem"])
        try tool.run(["pkey", "-in", "rsa.pem", "-pubout", "-outform", "DER", "-out", "pub.der"])
        let fromPEM = try PublicKey(pem: try tool.readText("pub.pem"))
        let der = try tool.read("pub.der")
        let fromDER = try PublicKey(spkiDER: der)
        let components = try fromPEM.components()
        #expect(try fromDER.components() == components)
        guard case .rsa(let modulus, let exponent) = components else {
            Issue.record("not RSA: \(components)")
            return
        }
        #expect(modulus.count == 256 && exponent == [1, 0, 1])
        let rebuilt = try PublicKey(rsaModulus: [0] + modulus, exponent: [0] + exponent)
        #expect(try rebuilt.components() == components, "leading zero bytes are tolerated")

        #expect(throws: CryptoError.invalidKey("")) { try PublicKey(spkiDER: der + [0]) }
        #expect(throws: CryptoError.invalidKey("")) { try PublicKey(spkiDER: Array(der.dropLast())) }
        #expect(throws: CryptoError.invalidKey("")) { try PublicKey(pem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n") }
        #expect(throws: CryptoError.invalidKey("")) { try PublicKey(rsaModulus: Array(modulus.prefix(128)), exponent: exponent) }
        for badExponent: [UInt8] in [[], [1], [0, 1], [1, 0, 0], [3, 0, 0, 0, 0, 0, 0, 0, 1]] {
            #expect(throws: CryptoError.invalidKey("")) { try PublicKey(rsaModulus: modulus, exponent: badExponent) }
        }
        _ = try PublicKey(rsaModulus: modulus, exponent: [3])
    }

    @Test("1024-bit RSA and Ed25519 keys are refused, as PEM and as private keys")
    func unsupportedKeys() throws {
        let tool = try OpenSSLTool()
        let small = try tool.makeRSAKey("small.pem", bits: 1024)
        #expect(throws: CryptoError.invalidKey("")) { try PrivateKey(pem: small) }
        try tool.run(["pkey", "-in", "small.pem", "-pubout", "-out", "small.pub"])
        #expect(throws: CryptoError.invalidKey("")) { try PublicKey(pem: try tool.readText("small.pub")) }
        try tool.run(["genpkey", "-algorithm", "ED25519", "-out", "ed.pem"])
        #expect(throws: CryptoError.invalidKey("")) { try PrivateKey(pem: try tool.readText("ed.pem")) }
        try tool.run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-aes-128-cbc", "-pass", "pass:secret", "-out", "enc.pem"])
        #expect(throws: CryptoError.invalidKey("")) { try PrivateKey(pem: try tool.readText("enc.pem")) }
        #expect(throws: CryptoError.invalidKey("")) { try PrivateKey(pem: "not a key") }
    }
}
