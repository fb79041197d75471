import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Fresh directories under /tmp for tests that need files. They are removed when the test
/// process exits (a run makes hundreds, with databases and logs in them), unless
/// GATEHOUSE_KEEP_TEST_FILES=1 keeps them for a look after a failure.
public enum TemporaryDirectory {
    public static func make() -> String {
        var template = Array("/tmp/gatehouse-test-XXXXXX".utf8CString)
        let path = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let base = buffer.baseAddress, let made = mkdtemp(base) else { return nil }
            return String(cString: made)
        }
        guard let path else { return "/tmp" }
        made.withLock { state in
            if !state.cleanupInstalled {
                state.cleanupInstalled = true
                atexit { TemporaryDirectory.removeAll() }
            }
            state.paths.append(path)
        }
        return path
    }

    private static let made = Mutex<(paths: [String], cleanupInstalled: Bool)>(([], false))

    private static func removeAll() {
        guard ProcessInfo.processInfo.environment["GATEHOUSE_KEEP_TEST_FILES"] != "1" else { return }
        for path in made.withLock({ $0.paths }) {
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}

/// A loopback port that was free a moment ago: for servers whose public URL must name their
/// port before they start (the provider callback).
public func freePort() -> UInt16 {
    let (descriptor, port) = boundLoopbackSocket()
    close(descriptor)
    return port
}

/// A loopback port that refuses every connection for as long as this value lives. Its socket
/// is bound, so no test running alongside can take the port (a port from `freePort` can be
/// taken, and then "unreachable" reaches someone else's server), but it never listens, so a
/// connection attempt is refused at once.
public final class RefusingPort: Sendable {
    public let port: UInt16
    private let descriptor: Int32

    public init() {
        (descriptor, port) = boundLoopbackSocket()
    }

    deinit { close(descriptor) }
}

/// A TCP socket bound to 127.0.0.1 on a port the kernel picked, and that port.
private func boundLoopbackSocket() -> (descriptor: Int32, port: UInt16) {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(descriptor, pointer, length)
            return getsockname(descriptor, pointer, &length)
        }
    }
    return (descriptor, UInt16(bigEndian: address.sin_port))
}
