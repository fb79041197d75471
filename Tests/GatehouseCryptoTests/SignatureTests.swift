import GatehouseCore
import GatehouseCrypto
import GatehouseTestSupport
import Testing

@Suite("Signatures against the openssl command line")
struct SignatureTests {
    let message = Array("eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiIxMjMifQ".utf8)

    @Test("ES256: our r‖s signatures verify here and, as DER, with openssl dgst -verify")
    func es256RoundTripAndCLIVerify() throws {
        let tool = try OpenSSLTool()
        let key = try PrivateKey(pem: try tool.makeP256Key("key.pem"))
        #expect(key.kind == .ec(.p256))
        let signature = try key.sign(message: message, algorithm: .es256)
        #expect(signature.count == 64)
        #expect(key.publicKey.verify(signature: signature, message: message, algorithm: .es256))

        try tool.run(["pkey", "-in", "key.pem", "-pubout", "-out", "pub.pem"])
        try tool.write("message.txt", message)
        try tool.write("signature.der", DERSignature.encode(raw: signature))
        let output = try tool.run(["dgst", "-sha256", "-verify", "pub.pem", "-signature", "signature.der", "message.txt"])
        #expect(output.contains("Verified OK"))
    }

    @Test("ES256: openssl dgst -sign signatures, converted to r‖s, verify with the PEM public key")
    func es256CLISignature() throws {
        let tool = try OpenSSLTool()
        _ = try tool.makeP256Key("key.pem")
        try tool.run(["pkey", "-in", "key.pem", "-pubout", "-out", "pub.pem"])
        let publicKey = try PublicKey(pem: try tool.readText("pub.pem"))
        try tool.write("message.txt", message)
        for round in 0..<3 {
            try tool.run(["dgst", "-sha256", "-sign", "key.pem", "-out", "sig\(round).der", "message.txt"])
            let raw = try #require(DERSignature.decode(der: try tool.read("sig\(round).der"), coordinateSize: 32))
            #expect(publicKey.verify(signature: raw, message: message, algorithm: .es256))
            // DER as such is not a JOSE signature.
            #expect(!publicKey.verify(signature: try tool.read("sig\(round).der"), message: message, algorithm: .es256))
        }
    }

    @Test("ES256: tampering, wrong lengths, wrong algorithms and other keys all fail")
    func es256Rejections() throws {
        let tool = try OpenSSLTool()
        let key = try PrivateKey(pem: try tool.makeP256Key("a.pem"))
        let other = try PrivateKey(pem: try tool.makeP256Key("b.pem"))
        let signature = try key.sign(message: message, algorithm: .es256)
        let publicKey = key.publicKey
        for index in [0, 20, 31, 32, 50, 63] {
            var damaged = signature
            damaged[index] ^= 0x01
            #expect(!publicKey.verify(signature: damaged, message: message, algorithm: .es256))
        }
        var damagedMessage = message
        damagedMessage[10] ^= 0x01
        #expect(!publicKey.verify(signature: signature, message: damagedMessage, algorithm: .es256))
        #expect(!publicKey.verify(signature: Array(signature.dropLast()), message: message, algorithm: .es256))
        #expect(!publicKey.verify(signature: signature + [0], message: message, algorithm: .es256))
        #expect(!publicKey.verify(signature: [], message: message, algorithm: .es256))
        #expect(!publicKey.verify(signature: [UInt8](repeating: 0, count: 64), message: message, algorithm: .es256))
        #expect(!publicKey.verify(signature: signature, message: message, algorithm: .es384))
        #expect(!publicKey.verify(signature: signature, message: message, algorithm: .rs256))
        #expect(!other.publicKey.verify(signature: signature, message: message, algorithm: .es256))
        #expect(throws: CryptoError.unsupportedAlgorithm("")) { try key.sign(message: message, algorithm: .rs256) }
    }

    @Test("RS256, RS384, RS512 and PS256: openssl dgst signatures verify through a key built from n and e")
    func rsaFromModulus() throws {
        let tool = try OpenSSLTool()
        _ = try tool.makeRSAKey("rsa.pem")
        let modulusLine = try tool.run(["rsa", "-in", "rsa.pem", "-noout", "-modulus"])
        let modulusHex = try #require(modulusLine.split(separator: "=").last).filter { !$0.isWhitespace }
        let publicKey = try PublicKey(rsaModulus: [UInt8](hex: String(modulusHex)), exponent: [0x01, 0x00, 0x01])
        #expect(publicKey.kind == .rsa(bits: 2048))
        try tool.write("message.txt", message)

        let cases: [(SignatureAlgorithm, [String])] = [
            (.rs256, ["-sha256"]), (.rs384, ["-sha384"]), (.rs512, ["-sha512"]),
            (.ps256, ["-sha256", "-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:digest"]),
        ]
        for (algorithm, options) in cases {
            try tool.run(["dgst"] + options + ["-sign", "rsa.pem", "-out", "\(algorithm.rawValue).sig", "message.txt"])
            let signature = try tool.read("\(algorithm.rawValue).sig")
            #expect(signature.count == 256)
            #expect(publicKey.verify(signature: signature, message: message, algorithm: algorithm), "\(algorithm)")
            var damaged = signature
            damaged[128] ^= 0x40
            #expect(!publicKey.verify(signature: damaged, message: message, algorithm: algorithm), "\(algorithm)")
            for wrong in SignatureAlgorithm.allCases where wrong != algorithm {
                #expect(!publicKey.verify(signature: signature, message: message, algorithm: wrong), "\(algorithm) as \(wrong)")
            }
        }
    }

    @Test("RSA private keys sign PKCS#1 v1.5 and PSS, and openssl agrees")
    func rsaSigning() throws {
        let tool = try OpenSSLTool()
        let key = try PrivateKey(pem: try tool.makeRSAKey("rsa.pem"))
        try tool.run(["pkey", "-in", "rsa.pem", "-pubout", "-out", "pub.pem"])
        try tool.write("message.txt", message)
        let pkcs1 = try key.sign(message: message, algorithm: .rs256)
        try tool.write("rs256.sig", pkcs1)
        #expect(try tool.run(["dgst", "-sha256", "-verify", "pub.pem", "-signature", "rs256.sig", "message.txt"]).contains("Verified OK"))
        let pss = try key.sign(message: message, algorithm: .ps256)
        #expect(key.publicKey.verify(signature: pss, message: message, algorithm: .ps256))
        #expect(!key.publicKey.verify(signature: pss, message: message, algorithm: .rs256))
        #expect(throws: CryptoError.unsupportedAlgorithm("")) { try key.sign(message: message, algorithm: .es256) }
    }

    @Test("one key verifies from many tasks at once")
    func concurrentVerification() async throws {
        let tool = try OpenSSLTool()
        let rsa = try PrivateKey(pem: try tool.makeRSAKey("rsa.pem"))
        let ec = try PrivateKey(pem: try tool.makeP256Key("ec.pem"))
        let message = self.message
        let cases: [(PublicKey, SignatureAlgorithm, [UInt8])] = try [
            (rsa.publicKey, .rs256, rsa.sign(message: message, algorithm: .rs256)),
            (rsa.publicKey, .ps384, rsa.sign(message: message, algorithm: .ps384)),
            (ec.publicKey, .es256, ec.sign(message: message, algorithm: .es256)),
        ]
        let results = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var correct = 0
                    for round in 0..<150 {
                        let (key, algorithm, signature) = cases[(task + round) % cases.count]
                        var damaged = signature
                        damaged[round % signature.count] ^= 0x10
                        if key.verify(signature: signature, message: message, algorithm: algorithm),
                            !key.verify(signature: damaged, message: message, algorithm: algorithm)
                        {
                            correct += 1
                        }
                    }
                    return correct
                }
            }
            return await group.reduce(0, +)
        }
        #expect(results == 8 * 150)
    }
}
