internal import CSQLite3

/// A connection to one SQLite database file, in WAL mode with foreign keys enforced and a busy
/// timeout, so a second process (another `loyalty` command) waits for a lock instead of failing.
///
/// Statements are prepared once per SQL text and kept: running the same SQL again only rebinds its
/// parameters. Confined to one task at a time.
public final class SQLiteDatabase {
    public let path: String
    private let connection: OpaquePointer
    /// Prepared statements by SQL text. A statement is taken out while it runs, so a statement
    /// started inside another's row callback gets its own.
    private var statements: [String: OpaquePointer] = [:]
    private var savepointDepth = 0

    private static let maxCachedStatements = 128
    /// SQLITE_TRANSIENT, which the importer drops: SQLite copies the bound bytes.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Opens or creates the database at `path`. A file that is not an SQLite database throws
    /// `SQLiteError.corrupt`.
    public init(path: String, busyTimeout: Duration = .seconds(5)) throws(SQLiteError) {
        self.path = path
        var opened: OpaquePointer?
        // NOMUTEX: the connection is confined to one task, so SQLite need not lock it on every call (a
        // fifth of the instructions of a 100,000-row scan).
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &opened, flags, nil)
        guard status == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_close_v2(opened)
            throw Self.isCorruption(status)
                ? .corrupt(path: path) : .cannotOpen(path: path, code: Int(status), message: message)
        }
        connection = opened
        let (seconds, attoseconds) = busyTimeout.components
        sqlite3_busy_timeout(connection, Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000))
        // A new file gets 16 KB pages (SQLite's default is 4 KB): a scan of the whole cache reads a quarter of
        // the pages, a third less time. It has to come before WAL, which fixes the size; an existing file
        // keeps its own.
        try execute("PRAGMA page_size = 16384")
        // The first statement to read the header: a garbage file fails here with SQLITE_NOTADB.
        try enableWriteAheadLog(busyTimeout: busyTimeout)
        try execute("PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;")
    }

    /// Switching a file to WAL needs its exclusive lock. When connections race to switch the same new file,
    /// each holds the shared lock the other waits for, and SQLite answers SQLITE_BUSY at once instead of
    /// calling the busy handler (it would deadlock). The mode is kept in the file, so a retry finds it set.
    private func enableWriteAheadLog(busyTimeout: Duration) throws(SQLiteError) {
        let pauseMilliseconds: Int32 = 20
        var attemptsLeft = max(1, Int(busyTimeout / .milliseconds(pauseMilliseconds)))
        while true {
            let status = sqlite3_exec(connection, "PRAGMA journal_mode = WAL", nil, nil, nil)
            attemptsLeft -= 1
            if status == SQLITE_OK { return }
            guard status & 0xFF == SQLITE_BUSY, attemptsLeft > 0 else {
                throw error(status, sql: "PRAGMA journal_mode = WAL")
            }
            sqlite3_sleep(pauseMilliseconds)
        }
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(connection)
    }

    /// Runs a script of one or more statements without parameters (DDL, migrations).
    public func execute(_ script: String) throws(SQLiteError) {
        let status = sqlite3_exec(connection, script, nil, nil, nil)
        guard status == SQLITE_OK else { throw error(status, sql: script) }
    }

    /// Runs one statement with bound parameters (`?` placeholders, in order) and discards any rows.
    /// Returns the number of rows it changed.
    @discardableResult
    public func run(_ sql: String, _ parameters: [SQLiteValue] = []) throws(SQLiteError) -> Int {
        try withStatement(sql, parameters) { statement throws(SQLiteError) in
            while try step(statement, sql) {}
        }
        return changes
    }

    /// Runs one statement with bound parameters and returns all of its rows.
    public func query(_ sql: String, _ parameters: [SQLiteValue] = []) throws(SQLiteError) -> [SQLiteRow] {
        var rows: [SQLiteRow] = []
        var columns: SQLiteColumns?
        try stepRows(sql, parameters) {
            rows.append($0.copied(sharing: &columns))
            return true
        }
        return rows
    }

    /// Runs one statement with bound parameters and hands each row to `body` as it is read, for
    /// results too large to hold at once. Throws `SQLiteError`, or what `body` threw (which stops
    /// the reading).
    public func forEachRow(
        _ sql: String, _ parameters: [SQLiteValue] = [], _ body: (SQLiteRow) throws -> Void
    ) throws {
        var columns: SQLiteColumns?
        try forEachRowInPlace(sql, parameters) { try body($0.copied(sharing: &columns)) }
    }

    /// Runs one statement with bound parameters and hands each row to `body` where SQLite holds it:
    /// nothing is copied out but what `body` reads, for scans of many rows. Throws `SQLiteError`, or what
    /// `body` threw (which stops the reading).
    public func forEachRowInPlace(
        _ sql: String, _ parameters: [SQLiteValue] = [], _ body: (SQLiteRowInPlace) throws -> Void
    ) throws {
        var bodyError: (any Error)?
        try stepRows(sql, parameters) { row in
            do {
                try body(row)
                return true
            } catch {
                bodyError = error
                return false
            }
        }
        if let bodyError { throw bodyError }
    }

    /// Runs `body` in a transaction: COMMIT when it returns, ROLLBACK when it throws. BEGIN
    /// IMMEDIATE takes the write lock up front, so two writers wait (busy timeout) instead of
    /// deadlocking. Nested calls become savepoints.
    public func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        let begin: String
        let commit: String
        let rollback: String
        if savepointDepth == 0 && sqlite3_get_autocommit(connection) != 0 {
            (begin, commit, rollback) = ("BEGIN IMMEDIATE", "COMMIT", "ROLLBACK")
        } else {
            let name = "nested_\(savepointDepth)"
            (begin, commit, rollback) = ("SAVEPOINT \(name)", "RELEASE \(name)", "ROLLBACK TO \(name); RELEASE \(name)")
        }
        try execute(begin)
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        do {
            let result = try body()
            try execute(commit)
            return result
        } catch {
            // SQLite may already have rolled back on its own (e.g. after SQLITE_FULL); then this
            // fails harmlessly, and the caller gets the error that caused it.
            try? execute(rollback)
            throw error
        }
    }

    /// PRAGMA user_version: the schema version for migrations, 0 in a new database.
    public var userVersion: Int {
        get throws(SQLiteError) {
            try query("PRAGMA user_version").first?[0].integer.map(Int.init) ?? 0
        }
    }

    public func setUserVersion(_ version: Int) throws(SQLiteError) {
        // PRAGMA takes no bound parameters; an Int cannot carry SQL.
        try execute("PRAGMA user_version = \(Int32(clamping: version))")
    }

    /// The rowid of the last row inserted on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(connection) }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes64(connection)) }

    /// Steps through the rows, in place, while `body` returns true.
    private func stepRows(
        _ sql: String, _ parameters: [SQLiteValue], _ body: (SQLiteRowInPlace) -> Bool
    ) throws(SQLiteError) {
        try withStatement(sql, parameters) { statement throws(SQLiteError) in
            while try step(statement, sql) {
                guard body(SQLiteRowInPlace(statement: statement)) else { return }
            }
        }
    }

    private func withStatement(
        _ sql: String, _ parameters: [SQLiteValue], _ body: (OpaquePointer) throws(SQLiteError) -> Void
    ) throws(SQLiteError) {
        let statement: OpaquePointer
        if let cached = statements.removeValue(forKey: sql) {
            statement = cached
        } else {
            statement = try prepare(sql)
        }
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
            if statements[sql] == nil && statements.count < Self.maxCachedStatements {
                statements[sql] = statement
            } else {
                sqlite3_finalize(statement)
            }
        }
        try bind(parameters, to: statement, sql)
        try body(statement)
    }

    private func prepare(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        // `tail` points into the C string, which lives only inside withCString: read what follows there.
        let (status, statement, trailing) = sql.withCString { text in
            var statement: OpaquePointer?
            var tail: UnsafePointer<CChar>?
            let status = sqlite3_prepare_v3(connection, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, &tail)
            return (status, statement, tail.map { !String(cString: $0).allSatisfy(\.isWhitespace) } ?? false)
        }
        guard status == SQLITE_OK, let statement else {
            throw status == SQLITE_OK
                ? .failed(code: Int(SQLITE_MISUSE), message: "no statement in the SQL text", sql: sql)
                : error(status, sql: sql)
        }
        if trailing {
            sqlite3_finalize(statement)
            throw .failed(
                code: Int(SQLITE_MISUSE), message: "more than one statement; use execute(_:) for scripts", sql: sql)
        }
        return statement
    }

    private func bind(_ parameters: [SQLiteValue], to statement: OpaquePointer, _ sql: String) throws(SQLiteError) {
        let expected = Int(sqlite3_bind_parameter_count(statement))
        guard expected == parameters.count else {
            throw .failed(
                code: Int(SQLITE_RANGE), message: "the statement has \(expected) parameters, \(parameters.count) given",
                sql: sql)
        }
        for (offset, value) in parameters.enumerated() {
            let index = Int32(offset + 1)
            let status =
                switch value {
                case .null: sqlite3_bind_null(statement, index)
                case .integer(let integer): sqlite3_bind_int64(statement, index, integer)
                case .real(let real): sqlite3_bind_double(statement, index, real)
                case .text(let text):
                    sqlite3_bind_text64(
                        statement, index, text, UInt64(text.utf8.count), Self.transient, UInt8(SQLITE_UTF8))
                case .blob(let bytes):
                    // An empty buffer has no address, and a NULL pointer would bind NULL, not an empty blob.
                    bytes.isEmpty
                        ? sqlite3_bind_zeroblob(statement, index, 0)
                        : bytes.withUnsafeBytes {
                            sqlite3_bind_blob64(statement, index, $0.baseAddress, UInt64($0.count), Self.transient)
                        }
                }
            guard status == SQLITE_OK else { throw error(status, sql: sql) }
        }
    }

    /// True while the statement has a row to read, false when it is done.
    private func step(_ statement: OpaquePointer, _ sql: String) throws(SQLiteError) -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let status: throw error(status, sql: sql)
        }
    }

    private static func isCorruption(_ status: Int32) -> Bool {
        status & 0xFF == SQLITE_CORRUPT || status & 0xFF == SQLITE_NOTADB
    }

    private func error(_ status: Int32, sql: String) -> SQLiteError {
        if Self.isCorruption(status) { return .corrupt(path: path) }
        return .failed(code: Int(status), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
    }
}
