import Foundation
import GatehouseCore
import Testing

@Suite("Service threads")
struct ServiceThreadTests {
    @Test("a service thread carries its component's name, cut to Linux's 15 bytes")
    func named() async throws {
        let seen: String = await withCheckedContinuation { continuation in
            let started = ServiceThread.startDetached(name: "sqlite-writer-with-a-long-name") {
                let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
                continuation.resume(returning: comm.trimmingCharacters(in: .newlines))
            }
            if !started { continuation.resume(returning: "not started") }
        }
        #expect(seen == "sqlite-writer-w")
    }
}
