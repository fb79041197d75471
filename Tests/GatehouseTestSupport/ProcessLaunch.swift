public import Foundation
import Synchronization

private let launches = Mutex(())

/// Starts `process`, one start at a time across the whole test process. The suites start
/// gateways, mock providers and tools from many threads at once, and Foundation's
/// `Process.run` on Linux crashed under that (an illegal instruction inside `run` while a
/// mock started). A start takes milliseconds, so taking turns costs the suite nothing.
public func launch(_ process: Process) throws {
    try launches.withLock { _ in try process.run() }
}

/// Reports a child that ends before its test stopped it. A gateway or mock that dies
/// mid-test otherwise shows up only as a refused connection in whichever request came next,
/// with the reason (a crash's signal and backtrace, or the mock's last words) lost.
final class ExitWatch: Sendable {
    private let expected: Mutex<Bool>

    /// Installs the report on `process`; call before launching it.
    init(_ process: Process, name: String, output: ChildOutput, expected: Bool = false) {
        self.expected = Mutex(expected)
        process.terminationHandler = { [self] finished in
            guard !self.expected.withLock({ $0 }) else { return }
            output.waitForEnd(within: 1)
            let how = finished.terminationReason == .uncaughtSignal
                ? "was killed by signal \(finished.terminationStatus)" : "exited with status \(finished.terminationStatus)"
            let report = "\(name) (pid \(finished.processIdentifier)) \(how) before its test stopped it; its output ends:\n"
                + String(output.text.suffix(4000)) + "\n"
            FileHandle.standardError.write(Data(report.utf8))
        }
    }

    /// From now on an exit is the test's doing (a stop, a signal it sends, a command that ends).
    func expectExit() {
        expected.withLock { $0 = true }
    }
}
