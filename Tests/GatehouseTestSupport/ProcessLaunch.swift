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
