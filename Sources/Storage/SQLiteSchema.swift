internal import GatehouseCore

/// Versioned schema migrations, tracked in `PRAGMA user_version`. Each step runs once, in
/// order, inside a transaction; a database newer than this binary is refused rather than
/// guessed at.
enum SQLiteSchema {
    static let migrations: [String] = [
        // 1: apps, keysets, short-lived records.
        """
        CREATE TABLE apps (
            key TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            sealed_secret BLOB NOT NULL,
            domains TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE keysets (
            app_key TEXT NOT NULL REFERENCES apps(key) ON DELETE CASCADE,
            provider TEXT NOT NULL,
            sealed_parameters BLOB NOT NULL,
            response_type TEXT NOT NULL,
            updated_at INTEGER NOT NULL,
            PRIMARY KEY (app_key, provider)
        );
        CREATE TABLE records (
            id TEXT PRIMARY KEY,
            value BLOB NOT NULL,
            expires_at INTEGER NOT NULL
        );
        CREATE INDEX records_expiry ON records(expires_at);
        """,
        // 2: records keyed by id alone (WITHOUT ROWID), so a login's put or take touches the
        // table's own b-tree instead of a rowid table plus its primary-key index.
        """
        CREATE TABLE records_by_id (
            id TEXT PRIMARY KEY,
            value BLOB NOT NULL,
            expires_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO records_by_id (id, value, expires_at) SELECT id, value, expires_at FROM records;
        DROP TABLE records;
        ALTER TABLE records_by_id RENAME TO records;
        """,
        // 3: the expiry index back. Without it the periodic purge of expired records scans
        // the whole table under the write lock, and abandoned logins make that table large.
        """
        CREATE INDEX records_expiry ON records(expires_at);
        """,
        // 4: whether an app's device may sign in natively with its public key alone.
        """
        ALTER TABLE keysets ADD COLUMN device_sign_in INTEGER NOT NULL DEFAULT 1;
        """,
    ]

    static func migrate(_ connection: SQLiteConnection) throws(StoreError) {
        while true {
            // The version is read inside the write lock, so a CLI and a server starting
            // together cannot both apply the same step.
            try connection.executeScript("BEGIN IMMEDIATE")
            do throws(StoreError) {
                let current = Int(try connection.query("PRAGMA user_version").first?.first?.integer ?? 0)
                guard current <= migrations.count else {
                    throw .corrupt(
                        "the database schema is version \(current), newer than this gatehouse (\(migrations.count))")
                }
                if current == migrations.count {
                    try connection.executeScript("COMMIT")
                    return
                }
                try connection.executeScript(migrations[current])
                try connection.executeScript("PRAGMA user_version = \(current + 1)")
                try connection.executeScript("COMMIT")
            } catch {
                try? connection.executeScript("ROLLBACK")
                throw error
            }
        }
    }
}
