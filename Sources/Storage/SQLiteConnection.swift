internal import CSQLite
internal import GatehouseCore

/// A value bound to or read from an SQLite statement.
enum SQLiteValue: Sendable, Equatable {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
    case null

    var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    var blob: [UInt8]? {
        switch self {
        case .blob(let value): value
        case .text(let value): Array(value.utf8)
        default: nil
        }
    }
}

/// One SQLite connection and its prepared statements. Not thread-safe: `SQLiteStore` confines
/// each connection to its own serial queue. The only type that holds SQLite pointers.
final class SQLiteConnection {
    private let database: OpaquePointer
    /// Prepared statements by the address of their SQL text: every statement is a literal, so
    /// a pointer comparison finds it where a dictionary would hash the whole text per query.
    private var statements: [(sql: UnsafeRawPointer, statement: OpaquePointer)] = []

    init(path: String) throws(StoreError) {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw .invalidLocation("cannot open \(path): \(message)")
        }
        database = handle
        sqlite3_busy_timeout(database, Self.busyTimeoutMilliseconds)
        sqlite3_extended_result_codes(database, 1)
    }

    deinit {
        for (_, statement) in statements { sqlite3_finalize(statement) }
        sqlite3_close_v2(database)
    }

    /// Runs one or more statements without parameters or results (schema, pragmas).
    func executeScript(_ sql: String) throws(StoreError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(database, sql, nil, nil, &message)
        guard rc == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(message)
            throw .unavailable("sqlite: \(text)")
        }
    }

    /// Runs a statement and returns its rows.
    @discardableResult
    func query(_ sql: StaticString, _ arguments: [SQLiteValue] = []) throws(StoreError) -> [[SQLiteValue]] {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch argument {
            case .integer(let value): rc = sqlite3_bind_int64(statement, index, value)
            case .text(let value): rc = gh_sqlite_bind_text(statement, index, value, -1)
            case .blob(let value):
                rc = value.withUnsafeBytes { gh_sqlite_bind_blob(statement, index, $0.baseAddress, Int32($0.count)) }
            case .null: rc = sqlite3_bind_null(statement, index)
            }
            guard rc == SQLITE_OK else { throw failure(rc) }
        }
        var rows: [[SQLiteValue]] = []
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw failure(rc) }
            let columns = sqlite3_column_count(statement)
            var row: [SQLiteValue] = []
            row.reserveCapacity(Int(columns))
            for column in 0..<columns {
                row.append(readColumn(statement, column))
            }
            rows.append(row)
        }
        return rows
    }

    /// How long SQLite's busy handler retries a lock another connection holds.
    static let busyTimeoutMilliseconds: Int32 = 5000

    /// Runs `body` with the busy handler giving up after `milliseconds` instead.
    func withBusyTimeout<T>(milliseconds: Int32, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        sqlite3_busy_timeout(database, milliseconds)
        defer { sqlite3_busy_timeout(database, Self.busyTimeoutMilliseconds) }
        return try body()
    }

    /// False in autocommit mode: no BEGIN, or SQLite rolled the transaction back on its own.
    var inTransaction: Bool { sqlite3_get_autocommit(database) == 0 }

    /// Rows changed by the last insert, update or delete.
    var changes: Int { Int(sqlite3_changes(database)) }

    private func prepared(_ sql: StaticString) throws(StoreError) -> OpaquePointer {
        let text = UnsafeRawPointer(sql.utf8Start)
        if let cached = statements.first(where: { $0.sql == text }) { return cached.statement }
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(
            database, text.assumingMemoryBound(to: CChar.self), Int32(sql.utf8CodeUnitCount), UInt32(SQLITE_PREPARE_PERSISTENT),
            &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw failure(rc) }
        statements.append((text, statement))
        return statement
    }

    private func readColumn(_ statement: OpaquePointer, _ column: Int32) -> SQLiteValue {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(statement, column))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(statement, column) else { return .null }
            let count = Int(sqlite3_column_bytes(statement, column))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, column))
            guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default:
            return .null
        }
    }

    private func failure(_ rc: Int32) -> StoreError {
        let message = String(cString: sqlite3_errmsg(database))
        if rc & 0xFF == SQLITE_CONSTRAINT { return .conflict("sqlite: \(message)") }
        if rc & 0xFF == SQLITE_CORRUPT || rc & 0xFF == SQLITE_NOTADB { return .corrupt("sqlite: \(message)") }
        return .unavailable("sqlite: \(message)")
    }
}
