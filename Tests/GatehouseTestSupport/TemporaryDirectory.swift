#if canImport(Glibc)
import Glibc
#endif

/// Fresh directories under /tmp for tests that need files.
public enum TemporaryDirectory {
    public static func make() -> String {
        var template = Array("/tmp/gatehouse-test-XXXXXX".utf8CString)
        let path = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let base = buffer.baseAddress, let made = mkdtemp(base) else { return nil }
            return String(cString: made)
        }
        return path ?? "/tmp"
    }
}

/// A loopback port that was free a moment ago: for servers whose public URL must name their
/// port before they start (the provider callback).
public func freePort() -> UInt16 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
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
    return UInt16(bigEndian: address.sin_port)
}
