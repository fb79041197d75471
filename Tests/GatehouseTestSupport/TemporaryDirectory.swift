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
