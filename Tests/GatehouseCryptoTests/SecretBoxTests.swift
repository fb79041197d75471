import GatehouseCrypto
import Testing

@Suite("Secrets at rest")
struct SecretBoxTests {
    let key = [UInt8](repeating: 7, count: 32)

    @Test("sealing round-trips and hides the plaintext")
    func roundTrip() throws {
        let box = try SecretBox(key: key)
        for plaintext in [[], Array("s3cret-value".utf8), [UInt8](repeating: 0x41, count: 5000)] {
            let sealed = try box.seal(plaintext, context: "ctx")
            #expect(sealed.count == plaintext.count + 29)
            if plaintext.count > 4 {
                #expect(!String(decoding: sealed, as: UTF8.self).contains(String(decoding: plaintext, as: UTF8.self)))
            }
            #expect(try box.open(sealed, context: "ctx") == plaintext)
        }
        #expect(try box.seal([1, 2, 3], context: "c") != box.seal([1, 2, 3], context: "c"), "fresh nonce each time")
    }

    @Test("the layout holds both ways: version, nonce, ciphertext and tag, as values already stored were sealed")
    func layout() throws {
        let box = try SecretBox(key: key)
        for plaintext in [[], Array("a keyset's parameters".utf8), [UInt8](repeating: 0x5A, count: 300)] {
            let context = "record:state:\(plaintext.count)"
            let sealed = try box.seal(plaintext, context: context)
            #expect(sealed[0] == 1)
            let nonce = Array(sealed[1..<13]), tag = Array(sealed.suffix(16))
            let opened = try AESGCM.open(Array(sealed[13..<(sealed.count - 16)]), key: key, nonce: nonce, aad: Array(context.utf8), tag: tag)
            #expect(opened == plaintext)
            // And a value sealed outside SecretBox, in the same layout, opens in it.
            let outside = try AESGCM.seal(plaintext, key: key, nonce: Array(repeating: 3, count: 12), aad: Array(context.utf8))
            let stored = [1] + [UInt8](repeating: 3, count: 12) + outside.ciphertext + outside.tag
            #expect(try box.open(stored, context: context) == plaintext)
        }
    }

    @Test("tampering, another context or another key all fail to open")
    func rejects() throws {
        let box = try SecretBox(key: key)
        let sealed = try box.seal(Array("payload".utf8), context: "app-secret:A")
        #expect(throws: CryptoError.openFailed("")) { try box.open(sealed, context: "app-secret:B") }
        for index in [0, 5, 15, sealed.count / 2, sealed.count - 1] {
            var damaged = sealed
            damaged[index] ^= 0x01
            #expect(throws: CryptoError.openFailed("")) { try box.open(damaged, context: "app-secret:A") }
        }
        #expect(throws: CryptoError.openFailed("")) { try box.open(Array(sealed.prefix(20)), context: "app-secret:A") }
        let other = try SecretBox(key: [UInt8](repeating: 8, count: 32))
        #expect(throws: CryptoError.openFailed("")) { try other.open(sealed, context: "app-secret:A") }
        #expect(throws: CryptoError.invalidKey("")) { try SecretBox(key: [1, 2, 3]) }
    }

    @Test("identifiers look like OAuth.io's and do not repeat")
    func identifiers() throws {
        var seen = Set<String>()
        for _ in 0..<1000 {
            let id = try SecureRandom.identifier()
            #expect(id.utf8.count == 27)
            #expect(id.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
            seen.insert(id)
        }
        #expect(seen.count == 1000)
    }

    @Test("random bytes come in the size asked and are never handed out twice, whatever the threads")
    func randomBytes() async throws {
        for count in [0, 1, 15, 64, 65, 4096, 5000] {
            #expect(try SecureRandom.bytes(count).count == count)
        }
        // Sizes that do not divide the reserve, so draws straddle its refills.
        let draws = try await withThrowingTaskGroup(of: [[UInt8]].self) { group in
            for worker in 0..<4 {
                group.addTask { try (0..<600).map { index in try SecureRandom.bytes(16 + (worker + index) % 49) } }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(Set(draws.map { $0.prefix(16) }).count == draws.count)
    }

    @Test("constant-time comparison agrees with ==")
    func constantTime() {
        #expect(ConstantTime.equals("abc", "abc"))
        #expect(!ConstantTime.equals("abc", "abd"))
        #expect(!ConstantTime.equals("abc", "abcd"))
        #expect(ConstantTime.equals("", ""))
        #expect(!ConstantTime.equals("", "a"))
        // Longer than a small string, so both are read from heap storage.
        let secret = "s3cr3t-" + String(repeating: "x", count: 40)
        #expect(ConstantTime.equals(secret, String(secret.utf8.map { Character(Unicode.Scalar($0)) })))
        #expect(!ConstantTime.equals(secret, String(secret.dropLast()) + "y"))
        #expect(ConstantTime.equals(Array(secret.utf8), Array(secret.utf8)))
        #expect(!ConstantTime.equals(Array(secret.utf8), Array(secret.utf8.dropLast())))
        #expect(ConstantTime.equals([UInt8](), []))
    }
}
