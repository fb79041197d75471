import Dispatch
import Testing
@testable import GatehouseCrypto

@Suite("AES-GCM")
struct AESGCMTests {
    private let zeroKey = [UInt8](repeating: 0, count: 32)
    private let zeroNonce = [UInt8](repeating: 0, count: 12)

    @Test("the GCM specification's AES-256 test cases 13 and 14, one-off and through reused contexts")
    func knownAnswers() throws {
        let keyed = AESGCM.Keyed(key: zeroKey)
        for _ in 0..<3 {
            let empty = try keyed.seal([], nonce: zeroNonce, aad: [])
            #expect(empty.ciphertext.isEmpty && empty.tag.hex == "530f8afbc74536b9a963b4f1c4cb738b")
            let block = try keyed.seal([UInt8](repeating: 0, count: 16), nonce: zeroNonce, aad: [])
            #expect(block.ciphertext.hex == "cea7403d4d606b6e074ec5d3baf39d18")
            #expect(block.tag.hex == "d0d1c8a799996bf0265b98b5d48ab919")
            #expect(try keyed.open(block.ciphertext, nonce: zeroNonce, aad: [], tag: block.tag) == [UInt8](repeating: 0, count: 16))
        }
        let oneOff = try AESGCM.seal([UInt8](repeating: 0, count: 16), key: zeroKey, nonce: zeroNonce, aad: [])
        #expect(oneOff.tag.hex == "d0d1c8a799996bf0265b98b5d48ab919")
    }

    @Test("a reused context gives what a fresh one gives, across directions, failed opens and threads")
    func reuseMatchesFresh() throws {
        let key = (0..<32).map { UInt8($0 * 7 & 0xFF) }
        let keyed = AESGCM.Keyed(key: key)
        for round in 0..<40 {
            let nonce = (0..<12).map { UInt8(($0 + round) & 0xFF) }
            let aad = Array("record:\(round)".utf8)
            let plaintext = [UInt8](repeating: UInt8(round), count: round * 5)
            let fresh = try AESGCM.seal(plaintext, key: key, nonce: nonce, aad: aad)
            let reused = try keyed.seal(plaintext, nonce: nonce, aad: aad)
            #expect(reused.ciphertext == fresh.ciphertext && reused.tag == fresh.tag, "round \(round)")
            var wrongTag = fresh.tag
            wrongTag[round % 16] ^= 1
            #expect(throws: CryptoError.self) { try keyed.open(fresh.ciphertext, nonce: nonce, aad: aad, tag: wrongTag) }
            #expect(throws: CryptoError.self) { try keyed.open(fresh.ciphertext, nonce: nonce, aad: aad + [0], tag: fresh.tag) }
            #expect(try keyed.open(fresh.ciphertext, nonce: nonce, aad: aad, tag: fresh.tag) == plaintext)
        }
        let failures = Counter(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0..<200 {
                let nonce = [UInt8](repeating: UInt8(worker), count: 11) + [UInt8(round & 0xFF)]
                let plaintext = Array("worker \(worker) round \(round)".utf8)
                guard let sealed = try? keyed.seal(plaintext, nonce: nonce, aad: []),
                    (try? keyed.open(sealed.ciphertext, nonce: nonce, aad: [], tag: sealed.tag)) == plaintext
                else { failures.add(1); continue }
            }
        }
        #expect(failures.value == 0)
    }
}

/// The array form of `Keyed`'s operations, as these tests call them; `SecretBox`, the one
/// caller in the product, passes borrowed bytes.
extension AESGCM.Keyed {
    fileprivate func seal(_ plaintext: [UInt8], nonce: [UInt8], aad: [UInt8]) throws -> (ciphertext: [UInt8], tag: [UInt8]) {
        var sealed = [UInt8](repeating: 0, count: plaintext.count + AESGCM.tagLength)
        try plaintext.withUnsafeBytes { input in
            try nonce.withUnsafeBytes { nonce in
                try aad.withUnsafeBytes { aad in try sealed.withUnsafeMutableBytes { try seal(input, nonce: nonce, aad: aad, into: $0) } }
            }
        }
        return (Array(sealed[..<plaintext.count]), Array(sealed[plaintext.count...]))
    }

    fileprivate func open(_ ciphertext: [UInt8], nonce: [UInt8], aad: [UInt8], tag: [UInt8]) throws -> [UInt8] {
        try ciphertext.withUnsafeBytes { ciphertext in
            try nonce.withUnsafeBytes { nonce in
                try aad.withUnsafeBytes { aad in try tag.withUnsafeBytes { try open(ciphertext, nonce: nonce, aad: aad, tag: $0) } }
            }
        }
    }
}

/// A counter the concurrent test's workers share.
private final class Counter: @unchecked Sendable {
    private let lock = DispatchQueue(label: "aesgcm-test-counter")
    private var count: Int

    init(_ count: Int) { self.count = count }
    func add(_ amount: Int) { lock.sync { count += amount } }
    var value: Int { lock.sync { count } }
}
