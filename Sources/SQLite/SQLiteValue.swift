internal import CSQLite3

/// One SQLite value, in SQLite's five storage classes.
public enum SQLiteValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    public var integer: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }

    /// A real, or an integer widened to Double.
    public var real: Double? {
        switch self {
        case .real(let value): value
        case .integer(let value): Double(value)
        default: nil
        }
    }

    public var text: String? {
        if case .text(let value) = self { value } else { nil }
    }

    public var blob: [UInt8]? {
        if case .blob(let value) = self { value } else { nil }
    }
}

/// One result row: values by position, or by column name.
public struct SQLiteRow: Sendable {
    public let values: [SQLiteValue]
    private let columns: SQLiteColumns

    init(values: [SQLiteValue], columns: SQLiteColumns) {
        self.values = values
        self.columns = columns
    }

    public var columnNames: [String] { columns.names }

    public subscript(index: Int) -> SQLiteValue { values[index] }

    /// The value of column `name` (as the query names it, e.g. with `AS`); nil if there is none.
    public subscript(name: String) -> SQLiteValue? {
        columns.positions[name].map { values[$0] }
    }
}

/// The row a statement stands on, read where SQLite holds it (`SQLiteDatabase.forEachRowInPlace`): valid
/// only until the statement steps on, so it is handed to a callback and never kept.
public struct SQLiteRowInPlace {
    private let statement: OpaquePointer

    init(statement: OpaquePointer) { self.statement = statement }

    public var count: Int { Int(sqlite3_column_count(statement)) }

    /// Column `index` as an integer (SQLite's conversion when it holds another type; 0 for NULL).
    public func integer(_ index: Int) -> Int64 { sqlite3_column_int64(statement, Int32(index)) }

    /// Column `index` as text, its UTF-8 bytes in SQLite's own memory, valid until the statement steps
    /// on or another column is read as another type; empty for NULL.
    public func text(_ index: Int) -> UnsafeRawBufferPointer {
        // The pointer before the length, as SQLite's documentation asks.
        guard let text = sqlite3_column_text(statement, Int32(index)) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, Int32(index))))
    }

    /// The row copied out, with the statement's column names, read on its first row and shared by the rest.
    func copied(sharing columns: inout SQLiteColumns?) -> SQLiteRow {
        let names =
            columns ?? SQLiteColumns(
                names: (0..<Int32(count)).map { String(cString: sqlite3_column_name(statement, $0)) })
        columns = names
        return SQLiteRow(values: (0..<Int32(count)).map(value), columns: names)
    }

    private func value(_ index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            return .text(String(decoding: text(Int(index)), as: UTF8.self))
        case SQLITE_BLOB:
            let bytes = sqlite3_column_blob(statement, index)
            let count = Int(sqlite3_column_bytes(statement, index))
            return .blob(count == 0 ? [] : Array(UnsafeRawBufferPointer(start: bytes, count: count)))
        default:
            return .null
        }
    }
}

/// A query's column names, shared by all of its rows.
final class SQLiteColumns: Sendable {
    let names: [String]
    let positions: [String: Int]

    init(names: [String]) {
        self.names = names
        positions = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }
}

public enum SQLiteError: Error, CustomStringConvertible, Equatable {
    /// The file is damaged or is not an SQLite database (SQLITE_CORRUPT, SQLITE_NOTADB): it must be
    /// rebuilt, retrying will not help.
    case corrupt(path: String)
    /// The database file could not be opened or created.
    case cannotOpen(path: String, code: Int, message: String)
    /// A statement failed; `code` is SQLite's extended result code, `sql` the statement.
    case failed(code: Int, message: String, sql: String)

    public var description: String {
        switch self {
        case .corrupt(let path):
            "the database \(path) is damaged or is not an SQLite database; it has to be rebuilt"
        case .cannotOpen(let path, let code, let message):
            "cannot open the database \(path): \(message) (SQLite code \(code)); check that its directory "
                + "exists and is writable"
        case .failed(let code, let message, let sql):
            "SQLite error \(code): \(message), in: \(sql)"
        }
    }

    /// SQLITE_CONSTRAINT: a UNIQUE, NOT NULL, CHECK or FOREIGN KEY constraint refused the change.
    public var isConstraintViolation: Bool {
        if case .failed(let code, _, _) = self { code & 0xFF == Int(SQLITE_CONSTRAINT) } else { false }
    }
}
