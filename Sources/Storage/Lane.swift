internal import GatehouseCore
internal import Synchronization

/// A connection and the lock that confines it to one thread at a time.
///
/// Reads run inline on the calling thread: a read takes microseconds, far less than the two
/// thread switches a hand-off would add.
final class Lane: @unchecked Sendable {
    // `@unchecked` because the connection is only touched while `lock` is held.
    private var connection: SQLiteConnection?
    private let lock = Mutex<Void>(())

    init(connection: SQLiteConnection) {
        self.connection = connection
    }

    func run<T: Sendable>(_ work: (SQLiteConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        try lock.withLock { _ throws(StoreError) -> T in try self.perform(work) }
    }

    /// Runs `work` only if nobody holds the connection; nil if it is busy.
    func runIfFree<T: Sendable>(_ work: (SQLiteConnection) throws(StoreError) -> T) -> Result<T, StoreError>? {
        lock.withLockIfAvailable { _ -> Result<T, StoreError> in
            do throws(StoreError) { return .success(try self.perform(work)) } catch { return .failure(error) }
        }
    }

    private func perform<T: Sendable>(_ work: (SQLiteConnection) throws(StoreError) -> T) throws(StoreError) -> T {
        guard let connection else { throw .unavailable("the store is closed") }
        return try work(connection)
    }

    func close() {
        lock.withLock { _ in connection = nil }
    }
}
