import Foundation
import GatehouseTestSupport
import Testing

/// No Docker engine runs here, so the container image is checked piecewise: the runtime
/// stage of docker/Dockerfile must install (directly or through their dependencies) the
/// Debian package of every shared library the gatehouse binary loads.
@Suite("Container image")
struct ImageTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs a command to completion with its output in a file (never a pipe).
    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let directory = TemporaryDirectory.make()
        let outputPath = directory + "/out", errorPath = directory + "/err"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: outputPath)
        process.standardError = FileHandle(forWritingAtPath: errorPath)
        try launch(process)
        process.waitUntilExit()
        return (process.terminationStatus, (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")
    }

    /// The packages between the `runtime-packages` markers of the final stage.
    static func runtimePackages() throws -> [String] {
        let dockerfile = try String(contentsOf: repository.appendingPathComponent("docker/Dockerfile"), encoding: .utf8)
        guard let begin = dockerfile.range(of: "# runtime-packages:begin"), let end = dockerfile.range(of: "# runtime-packages:end") else {
            throw RawHTTPError("docker/Dockerfile lacks the runtime-packages markers")
        }
        return dockerfile[begin.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line in
            let word = line.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "\\", with: "").trimmingCharacters(in: .whitespaces)
            return word.isEmpty || word.hasPrefix("#") ? nil : word
        }
    }

    /// The packages `roots` pull in when apt installs them: Depends and Pre-Depends, every
    /// alternative, followed through the packages installed on this machine.
    static func dependencyClosure(_ roots: [String]) throws -> Set<String> {
        var closure: Set<String> = []
        var pending = roots
        while let package = pending.popLast() {
            guard closure.insert(package).inserted else { continue }
            let query = try run("/usr/bin/dpkg-query", ["-W", "-f", "${Depends}, ${Pre-Depends}", package])
            guard query.status == 0 else { continue }
            for clause in query.output.split(separator: ",") {
                for alternative in clause.split(separator: "|") {
                    let name = alternative.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? ""
                    let bare = name.split(separator: ":").first.map(String.init) ?? ""
                    if !bare.isEmpty, !closure.contains(bare) { pending.append(bare) }
                }
            }
        }
        return closure
    }

    @Test("the runtime stage's packages provide every library ldd reports for gatehouse")
    func runtimeLibrariesCovered() async throws {
        // Child processes are waited for off the cooperative pool; expectations stay here.
        let packages = try Self.runtimePackages()
        #expect(packages.contains("libhiredis0.14") && packages.contains("libmicrohttpd12"))
        let ldd = try await offPool { try Self.run("/usr/bin/ldd", [GatehouseProcess.binaryPath]) }
        #expect(ldd.status == 0)
        var libraries: [String: String] = [:]  // file name -> resolved path
        for line in ldd.output.split(separator: "\n") {
            let fields = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
            if fields.count >= 3, fields[1] == "=>" {
                libraries[String(fields[0])] = String(fields[2])
            } else if let first = fields.first, first.hasPrefix("/") {
                libraries[String(first.split(separator: "/").last ?? "")] = String(first)
            }
        }
        #expect(libraries["libhiredis.so.0.14"] != nil, "gatehouse links hiredis")

        // The Swift runtime comes from the toolchain in a debug build; the image links it
        // statically (--static-swift-stdlib), so those libraries need no package.
        let toolchain = libraries.filter { $0.value.contains("/lib/swift/") }
        let system = libraries.filter { !$0.value.contains("/lib/swift/") }
        #expect(toolchain.keys.allSatisfy { $0.hasPrefix("libswift") || $0.hasPrefix("libFoundation") || $0.hasPrefix("lib_Foundation")
            || $0.hasPrefix("libdispatch") || $0.hasPrefix("libBlocksRuntime") }, "\(toolchain.keys.sorted())")

        // Debian's merged /usr: a file may be registered under /lib or /usr/lib.
        var candidates: [String] = []
        for path in system.values {
            candidates.append(path)
            if path.hasPrefix("/usr/") { candidates.append(String(path.dropFirst(4))) } else { candidates.append("/usr" + path) }
        }
        let owners = try await offPool { [candidates] in try Self.run("/usr/bin/dpkg", ["-S"] + candidates) }
        var ownerByFile: [String: String] = [:]
        for line in owners.output.split(separator: "\n") {
            guard let colon = line.range(of: ": ") else { continue }
            let package = line[..<colon.lowerBound].split(separator: ":").first.map(String.init) ?? ""
            let file = line[colon.upperBound...].split(separator: "/").last.map(String.init) ?? ""
            ownerByFile[file] = package
        }
        let closure = try await offPool { try Self.dependencyClosure(packages) }
        for (name, path) in system.sorted(by: { $0.key < $1.key }) {
            let owner = ownerByFile[name]
            #expect(owner != nil, "no Debian package owns \(path)")
            if let owner {
                #expect(closure.contains(owner), "\(name) comes from \(owner), which the runtime stage does not install")
            }
        }
    }
}
