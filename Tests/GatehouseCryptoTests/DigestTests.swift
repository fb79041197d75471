import GatehouseCrypto
import Testing

@Suite("Digests and HMAC")
struct DigestTests {
    @Test("SHA-1, SHA-256, SHA-384 and SHA-512 of \"abc\" (FIPS 180-2 examples)")
    func abc() {
        let abc = Array("abc".utf8)
        #expect(Digest.sha256(abc).hex == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Digest.sha1(abc).hex == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(
            Digest.sha384(abc).hex
                == "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7")
        #expect(
            Digest.sha512(abc).hex
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
        #expect(Digest.sha256([]).hex == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let key: [UInt8]
        let message: [UInt8]
        let expected: String
        var testDescription: String { name }
    }

    static let rfc2202: [Vector] = [
        Vector(name: "RFC 2202 case 1", key: [UInt8](repeating: 0x0B, count: 20), message: Array("Hi There".utf8),
               expected: "b617318655057264e28bc0b6fb378c8ef146be00"),
        Vector(name: "RFC 2202 case 2", key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8),
               expected: "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
        Vector(name: "RFC 2202 case 3", key: [UInt8](repeating: 0xAA, count: 20), message: [UInt8](repeating: 0xDD, count: 50),
               expected: "125d7342b9ac11cd91a39af48aa17b4f63f175d3"),
        Vector(name: "RFC 2202 case 6", key: [UInt8](repeating: 0xAA, count: 80),
               message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
               expected: "aa4ae5e15272d00e95705637ce8a3b55ed402112"),
        Vector(name: "RFC 2202 case 7", key: [UInt8](repeating: 0xAA, count: 80),
               message: Array("Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data".utf8),
               expected: "e8e99d0f45237d786d6bbaa7965c7808bbff1a91"),
    ]

    static let rfc4231: [Vector] = [
        Vector(name: "RFC 4231 case 1", key: [UInt8](repeating: 0x0B, count: 20), message: Array("Hi There".utf8),
               expected: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        Vector(name: "RFC 4231 case 2", key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8),
               expected: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        Vector(name: "RFC 4231 case 3", key: [UInt8](repeating: 0xAA, count: 20), message: [UInt8](repeating: 0xDD, count: 50),
               expected: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        Vector(name: "RFC 4231 case 6", key: [UInt8](repeating: 0xAA, count: 131),
               message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
               expected: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        Vector(name: "RFC 4231 case 7", key: [UInt8](repeating: 0xAA, count: 131),
               message: Array(("This is a test using a larger than block-size key and a larger than block-size data. "
                   + "The key needs to be hashed before being used by the HMAC algorithm.").utf8),
               expected: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test("HMAC-SHA1 matches RFC 2202", arguments: rfc2202)
    func hmacSHA1(vector: Vector) {
        #expect(HMAC.sha1(key: vector.key, message: vector.message).hex == vector.expected)
    }

    @Test("HMAC-SHA256 matches RFC 4231", arguments: rfc4231)
    func hmacSHA256(vector: Vector) {
        #expect(HMAC.sha256(key: vector.key, message: vector.message).hex == vector.expected)
    }

    @Test("an empty key and an empty message still authenticate (values from Python's hmac)")
    func emptyKey() {
        #expect(HMAC.sha1(key: [], message: []).hex == "fbdb1d1b18aa6c08324b7d64b71fb76370690e1d")
        #expect(HMAC.sha256(key: [], message: []).hex == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }
}
