import GatehouseCrypto
import GatehouseTestSupport
import Testing

/// The primitives carrier vendors need, against published vectors (FIPS 197, NIST SP 800-38A,
/// RFC 1321, RFC 2202) and each other.
@Suite("Block ciphers, RSA PKCS#1 v1.5, MD5")
struct BlockCipherTests {
    @Test("AES-128/256 ECB against FIPS 197 appendix C (one block, padding block stripped)")
    func aesECB() throws {
        let plaintext = [UInt8](hex: "00112233445566778899aabbccddeeff")
        for (key, expected) in [
            ("000102030405060708090a0b0c0d0e0f", "69c4e0d86a7b0430d8cdb78070b4c55a"),
            ("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "8ea2b7ca516745bfeafc49904b496089"),
        ] {
            let sealed = try BlockCipher.encrypt(plaintext, algorithm: .aes, mode: .ecb, key: [UInt8](hex: key))
            #expect(sealed.count == 32)
            #expect(Array(sealed.prefix(16)).hex == expected)
            #expect(try BlockCipher.decrypt(sealed, algorithm: .aes, mode: .ecb, key: [UInt8](hex: key)) == plaintext)
        }
    }

    @Test("AES-128-CBC against SP 800-38A F.2.1 (first block)")
    func aesCBC() throws {
        let key = [UInt8](hex: "2b7e151628aed2a6abf7158809cf4f3c")
        let iv = [UInt8](hex: "000102030405060708090a0b0c0d0e0f")
        let sealed = try BlockCipher.encrypt([UInt8](hex: "6bc1bee22e409f96e93d7e117393172a"), algorithm: .aes, mode: .cbc, key: key, iv: iv)
        #expect(Array(sealed.prefix(16)).hex == "7649abac8119b246cee98e9b12e9197d")
    }

    @Test("DES-CBC (legacy provider) and 3DES round-trip; wrong sizes and keys are errors, not crashes")
    func desAndErrors() throws {
        let message = Array("carrier one-click".utf8)
        let des = try BlockCipher.encrypt(message, algorithm: .des, mode: .cbc, key: Array("9ea05374".utf8), iv: Array("00000000".utf8))
        #expect(try BlockCipher.decrypt(des, algorithm: .des, mode: .cbc, key: Array("9ea05374".utf8), iv: Array("00000000".utf8)) == message)
        let key3 = Array("0123456789abcdefFEDCBA98".utf8)
        let triple = try BlockCipher.encrypt(message, algorithm: .tripleDES, mode: .ecb, key: key3)
        #expect(try BlockCipher.decrypt(triple, algorithm: .tripleDES, mode: .ecb, key: key3) == message)
        #expect(throws: CryptoError.invalidKey("")) { try BlockCipher.encrypt(message, algorithm: .aes, mode: .ecb, key: [1, 2, 3]) }
        #expect(throws: CryptoError.invalidKey("")) {
            try BlockCipher.encrypt(message, algorithm: .aes, mode: .cbc, key: [UInt8](repeating: 1, count: 16), iv: [1])
        }
        #expect(throws: CryptoError.openFailed("")) {
            try BlockCipher.decrypt([1, 2, 3], algorithm: .aes, mode: .ecb, key: [UInt8](repeating: 1, count: 16))
        }
        let sealed = try BlockCipher.encrypt(message, algorithm: .aes, mode: .ecb, key: [UInt8](repeating: 1, count: 16))
        #expect(throws: CryptoError.openFailed("")) {
            try BlockCipher.decrypt(sealed, algorithm: .aes, mode: .ecb, key: [UInt8](repeating: 2, count: 16))
        }
    }

    @Test("MD5 (RFC 1321) and HMAC-MD5 (RFC 2202 case 2)")
    func md5() {
        #expect(Digest.md5(Array("abc".utf8)).hex == "900150983cd24fb0d6963f7d28e17f72")
        #expect(HMAC.md5(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)).hex == "750c783e6ab0b503eaa86e310a5db738")
    }

    @Test("RSA PKCS#1 v1.5: encrypt with the public half, decrypt and sign with the private one")
    func rsa() throws {
        let tool = try OpenSSLTool()
        let pem = try tool.makeRSAKey("rsa1024.pem", bits: 1024)
        let publicPEM = try tool.run(["pkey", "-in", "rsa1024.pem", "-pubout"])
        let privateKey = try RSACipherKey(privatePEM: pem)
        let publicKey = try RSACipherKey(publicPEM: publicPEM)
        #expect(privateKey.bits == 1024 && privateKey.isPrivate && !publicKey.isPrivate)
        let sealed = try publicKey.encrypt(Array("13800138000".utf8))
        #expect(sealed.count == 128)
        #expect(try privateKey.decrypt(sealed) == Array("13800138000".utf8))
        #expect(throws: CryptoError.invalidKey("")) { try publicKey.decrypt(sealed) }
        #expect(throws: CryptoError.openFailed("")) { try privateKey.decrypt(Array(sealed.reversed())) }
        #expect(try privateKey.sign(Array("msg".utf8)).count == 128)
        #expect(throws: CryptoError.invalidKey("")) { try RSACipherKey(privatePEM: "not a key") }
    }
}
