#if canImport(Glibc)
internal import Glibc
#endif

/// The few file operations the gateway needs, on plain POSIX calls.
public enum FileSystem {
    /// The whole file, or nil if it cannot be read. Files over `limit` bytes are refused.
    public static func read(_ path: String, limit: Int = 4 << 20) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit { return nil }
        }
    }

    /// Creates `path` with `bytes` and mode `mode`, failing if it exists, so that two processes
    /// racing to create the same key file cannot both win.
    public static func createExclusively(_ path: String, bytes: [UInt8], mode: UInt32) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress.map { $0 + offset }, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                unlink(path)
                return false
            }
            offset += written
        }
        return fsync(descriptor) == 0
    }

    /// Takes an exclusive lock on `path` (created if missing) that lasts as long as the process:
    /// the descriptor stays open. False if another process holds it or the file cannot be opened.
    public static func lockForLifetime(_ path: String) -> Bool {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return false
        }
        return true
    }

    public static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Creates a directory and its parents (mode 0700 for new ones).
    public static func makeDirectories(_ path: String) -> Bool {
        var current = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o700) != 0, errno != EEXIST { return false }
        }
        return true
    }

    /// Names of the entries in a directory, sorted; empty if it cannot be listed.
    public static func entries(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// The directory holding the running executable.
    public static func executableDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }

    /// Finds the providers shipped with this build: an installed `share/gatehouse/providers`
    /// beside the binary, the source tree's `providers/` above a `.build` binary, or `./providers`.
    /// `path` with symbolic links and `.`/`..` resolved, or `path` itself if it does not exist.
    public static func canonicalPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    public static func builtinProvidersDirectory() -> String? {
        var candidates: [String] = []
        if let directory = executableDirectory() {
            candidates.append(directory + "/../share/gatehouse/providers")
            var current = directory
            for _ in 0..<6 {
                candidates.append(current + "/providers")
                guard let slash = current.lastIndex(of: "/"), slash != current.startIndex else { break }
                current = String(current[..<slash])
            }
        }
        candidates.append("./providers")
        return candidates.first(where: isDirectory)
    }
}
