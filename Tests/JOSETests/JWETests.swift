import Foundation
import GatehouseCore
import GatehouseCrypto
import GatehouseTestSupport
import JOSE
import Testing

/// Compact JWE decryption, checked against RFC 7518's content-encryption vector and against
/// tokens the openssl command line builds, independently of the code under test.
@Suite("Compact JWE")
struct JWETests {
    static func hex(_ text: String) -> [UInt8] { Hex.decode(Array(text.utf8)) ?? [] }

    static func hexString(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

    @Test("RFC 7518 B.1: AES_128_CBC_HMAC_SHA_256 opens the published ciphertext and refuses a changed tag")
    func rfc7518B1() throws {
        let key = Array(0..<32).map(UInt8.init)
        let plaintext = "A cipher system must not be required to be secret, and it must be able to fall into the hands of the enemy without inconvenience"
        let aad = Array("The second principle of Auguste Kerckhoffs".utf8)
        let iv = Self.hex("1af38c2dc2b96ffdd86694092341bc04")
        let ciphertext = Self.hex(
            "c80edfa32ddf39d5ef00c0b468834279a2e46a1b8049f792f76bfe54b903a9c9a94ac9b47ad2655c5f10f9aef71427e2fc6f9b3f399a221489f16362c703"
                + "233609d45ac69864e3321cf82935ac4096c86e133314c54019e8ca7980dfa4b9cf1b384c486f3a54c51078158ee5d79de59fbd34d848b3d69550a676"
                + "46344427ade54b8851ffb598f7f80074b9473c82e2db")
        let tag = Self.hex("652c3fa36b0a7c5b3219fab3a30bc1c4")
        let opened = JWE.openContent(ciphertext, enc: .a128CBCHS256, key: key, iv: iv, aad: aad, tag: tag)
        #expect(opened.map { String(decoding: $0, as: UTF8.self) } == plaintext)
        var changed = tag
        changed[15] ^= 1
        #expect(JWE.openContent(ciphertext, enc: .a128CBCHS256, key: key, iv: iv, aad: aad, tag: changed) == nil)
        #expect(JWE.openContent(ciphertext, enc: .a128CBCHS256, key: key, iv: iv, aad: aad + [0], tag: tag) == nil)
    }

    /// A JWE of `plaintext` to the public key in `public.pem`, made with openssl alone.
    static func encrypt(_ plaintext: String, header: String, openssl: OpenSSLTool, contentKey: [UInt8], iv: [UInt8]) throws -> String {
        try openssl.write("cek.bin", contentKey)
        try openssl.run([
            "pkeyutl", "-encrypt", "-pubin", "-inkey", "public.pem", "-in", "cek.bin", "-out", "ek.bin",
            "-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", "rsa_oaep_md:sha256", "-pkeyopt", "rsa_mgf1_md:sha256",
        ])
        try openssl.write("plain.bin", Array(plaintext.utf8))
        try openssl.run([
            "enc", "-aes-128-cbc", "-K", hexString(Array(contentKey[16...])), "-iv", hexString(iv), "-in", "plain.bin", "-out", "c.bin",
        ])
        let ciphertext = try openssl.read("c.bin")
        let protected = Base64URL.encode(Array(header.utf8))
        let aad = Array(protected.utf8)
        let bits = UInt64(aad.count * 8)
        try openssl.write("mac.bin", aad + iv + ciphertext + (0..<8).map { UInt8(truncatingIfNeeded: bits >> (56 - 8 * UInt64($0))) })
        let mac = try openssl.run(["mac", "-digest", "SHA256", "-macopt", "hexkey:" + hexString(Array(contentKey[..<16])), "-in", "mac.bin", "HMAC"])
        let tag = Array(hex(mac.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()).prefix(16))
        return [protected, Base64URL.encode(try openssl.read("ek.bin")), Base64URL.encode(iv), Base64URL.encode(ciphertext), Base64URL.encode(tag)]
            .joined(separator: ".")
    }

    @Test("RSA-OAEP-256 with A128CBC-HS256 from openssl opens with the app's key; any other key, part or header is refused")
    func openSSLMade() throws {
        let openssl = try OpenSSLTool()
        let pem = try openssl.makeRSAKey("app.pem")
        try openssl.run(["pkey", "-in", "app.pem", "-pubout", "-out", "public.pem"])
        let key = try RSACipherKey(privatePEM: pem)
        let contentKey = Array(100..<132).map(UInt8.init)
        let iv = Array(0..<16).map(UInt8.init)
        let header = #"{"alg":"RSA-OAEP-256","enc":"A128CBC-HS256","cty":"JWT"}"#
        let token = try Self.encrypt("inner.jws.token", header: header, openssl: openssl, contentKey: contentKey, iv: iv)
        #expect(JWE.isEncrypted(token) && !JWE.isEncrypted("a.b.c"))
        let opened = try JWE.decrypt(token, key: key)
        #expect(String(decoding: opened.plaintext, as: UTF8.self) == "inner.jws.token" && opened.header["cty"] == "JWT")

        let other = try RSACipherKey(privatePEM: try openssl.makeRSAKey("other.pem"))
        #expect(throws: JOSEError.undecryptable("the token does not decrypt with the app's key")) { try JWE.decrypt(token, key: other) }
        var parts = token.split(separator: ".").map(String.init)
        let original = parts
        for index in 1...4 {
            parts = original
            var bytes = try #require(Base64URL.decode(parts[index]))
            bytes[bytes.count / 2] ^= 0x01
            parts[index] = Base64URL.encode(bytes)
            #expect(throws: JOSEError.undecryptable("the token does not decrypt with the app's key")) {
                try JWE.decrypt(parts.joined(separator: "."), key: key)
            }
        }
        // The header is authenticated too: a changed one no longer matches the tag.
        parts = original
        parts[0] = Base64URL.encode(Array(#"{"alg":"RSA-OAEP-256","enc":"A128CBC-HS256"}"#.utf8))
        #expect(throws: JOSEError.undecryptable("the token does not decrypt with the app's key")) { try JWE.decrypt(parts.joined(separator: "."), key: key) }
        for (header, error) in [
            (#"{"alg":"RSA1_5","enc":"A128CBC-HS256"}"#, JOSEError.unsupportedAlgorithm("")),
            (#"{"alg":"dir","enc":"A128CBC-HS256"}"#, .unsupportedAlgorithm("")),
            (#"{"alg":"RSA-OAEP","enc":"A128CBC-HS256","zip":"DEF"}"#, .unsupportedAlgorithm("")),
            (#"{"alg":"RSA-OAEP","enc":"A128CBC-HS256","crit":["x"]}"#, .malformed("")),
            (#"{"alg":"RSA-OAEP","enc":"A512KW"}"#, .unsupportedAlgorithm("")),
        ] {
            parts = original
            parts[0] = Base64URL.encode(Array(header.utf8))
            #expect(throws: error) { try JWE.decrypt(parts.joined(separator: "."), key: key) }
        }
        #expect(throws: JOSEError.malformed("")) { try JWE.decrypt(original.prefix(4).joined(separator: "."), key: key) }
        #expect(throws: JOSEError.malformed("")) { try JWE.decrypt(original.joined(separator: ".") + "=", key: key) }
        #expect(throws: JOSEError.malformed("")) { try JWE.decrypt(String(repeating: "a", count: JWE.maximumLength + 1), key: key) }
        let publicHalf = try RSACipherKey(publicPEM: try openssl.readText("public.pem"))
        #expect(throws: JOSEError.invalidKey("")) { try JWE.decrypt(token, key: publicHalf) }
    }

    @Test("JWEs made for a published key open with its private half in every algorithm pair; openssl unwraps and decrypts one")
    func encryptToPublishedKey() throws {
        let openssl = try OpenSSLTool()
        let pem = try openssl.makeRSAKey("provider.pem")
        try openssl.run(["pkey", "-in", "provider.pem", "-pubout", "-out", "public.pem"])
        let published = try RSACipherKey(publicPEM: try openssl.readText("public.pem"))
        let privateHalf = try RSACipherKey(privatePEM: pem)
        let inner = Array("eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJjbGllbnQifQ.c2lnbmF0dXJl".utf8)
        for alg in JWE.KeyAlgorithm.allCases {
            for enc in JWE.ContentAlgorithm.allCases {
                let token = try JWE.encrypt(inner, to: published, keyID: "enc-1", alg: alg, enc: enc, contentType: "JWT")
                let opened = try JWE.decrypt(token, key: privateHalf)
                #expect(opened.plaintext == inner, "\(alg) \(enc)")
                #expect(opened.header == ["alg": .string(alg.rawValue), "enc": .string(enc.rawValue), "kid": "enc-1", "cty": "JWT"])
                // Fresh content key and IV each time.
                #expect(try JWE.encrypt(inner, to: published, keyID: nil, alg: alg, enc: enc) != token)
            }
        }
        // Independently of JWE.decrypt: openssl unwraps the content key and decrypts the content.
        let token = try JWE.encrypt(inner, to: published, keyID: nil, alg: .rsaOAEP256, enc: .a128CBCHS256)
        let parts = try token.split(separator: ".").map { try #require(Base64URL.decode(String($0))) }
        try openssl.write("ek.bin", parts[1])
        try openssl.run([
            "pkeyutl", "-decrypt", "-inkey", "provider.pem", "-in", "ek.bin", "-out", "cek.bin",
            "-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt", "rsa_oaep_md:sha256", "-pkeyopt", "rsa_mgf1_md:sha256",
        ])
        let contentKey = try openssl.read("cek.bin")
        #expect(contentKey.count == 32)
        try openssl.write("c.bin", parts[3])
        try openssl.run(["enc", "-d", "-aes-128-cbc", "-K", Self.hexString(Array(contentKey[16...])), "-iv", Self.hexString(parts[2]),
            "-in", "c.bin", "-out", "p.bin"])
        #expect(try openssl.read("p.bin") == inner)
        _ = try openssl.makeRSAKey("small.pem", bits: 1024)
        let small = try RSACipherKey(publicPEM: try openssl.run(["pkey", "-pubout", "-in", "small.pem"]))
        #expect(throws: JOSEError.invalidKey("")) { try JWE.encrypt(inner, to: small, keyID: nil, alg: .rsaOAEP, enc: .a256GCM) }
    }

    @Test("A256GCM content opens with AES-GCM; the GCM specification's test case 16 (AES-256, with additional data) holds")
    func gcm() throws {
        let key = Self.hex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
        let iv = Self.hex("cafebabefacedbaddecaf888")
        let aad = Self.hex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let plaintext = Self.hex(
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39")
        let sealed = try AESGCM.seal(plaintext, key: key, nonce: iv, aad: aad)
        #expect(Self.hexString(sealed.ciphertext) == "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662")
        #expect(Self.hexString(sealed.tag) == "76fc6ece0f4e1768cddf8853bb2d551b")
        #expect(JWE.openContent(sealed.ciphertext, enc: .a256GCM, key: key, iv: iv, aad: aad, tag: sealed.tag) == plaintext)
        #expect(JWE.openContent(sealed.ciphertext, enc: .a256GCM, key: key, iv: iv, aad: [], tag: sealed.tag) == nil)
    }
}
