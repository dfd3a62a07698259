internal import CLibPQ
import Glibc

/// The rows of a statement. It owns its PGresult, which libpq documents as read-only and safe to share across
/// threads once created; values are read from it (text format) only when decoded.
public struct PostgresResult: Sendable, RandomAccessCollection {
    let storage: ResultStorage

    init(_ result: OpaquePointer) {
        storage = ResultStorage(result)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.rowCount }
    public subscript(row: Int) -> PostgresRow {
        precondition(indices.contains(row), "row \(row) out of range 0..<\(count)")
        return PostgresRow(storage: storage, row: Int32(row))
    }

    /// Rows inserted, updated, deleted, selected... as the command tag counts them (0 when it has no count).
    public var rowsAffected: Int { storage.rowsAffected }
    /// Column names in select-list order.
    public var columns: [String] { storage.columns }
    /// The command tag, e.g. "INSERT 0 1" or "ROLLBACK".
    public var commandTag: String { storage.commandTag }
}

/// One row of a `PostgresResult`; columns are looked up by their exact (case-sensitive) name.
public struct PostgresRow: Sendable {
    @usableFromInline let storage: ResultStorage
    @usableFromInline let row: Int32

    /// The value of `column`; SQL NULL is a decoding error unless `T` is an Optional. Inlinable, so each caller's
    /// `T` is decoded directly rather than through its witness table.
    @inlinable public func decode<T: PostgresDecodable>(
        _ column: String, as type: T.Type = T.self
    ) throws(PostgresError) -> T {
        guard let text = try bytes(of: column) else {
            guard let null = T.valueForSQLNull else {
                throw PostgresError(kind: .decoding, message: "column \"\(column)\" is NULL, expected \(T.self)")
            }
            return null
        }
        return try value(of: column, from: text)
    }

    /// The value of `column`, nil for SQL NULL.
    @inlinable public func decode<T: PostgresDecodable>(
        _ column: String, as type: T?.Type
    ) throws(PostgresError) -> T? {
        guard let text = try bytes(of: column) else { return nil }
        return try value(of: column, from: text) as T
    }

    /// The text of `column` where libpq holds it, nil for SQL NULL: valid while `storage` lives, as it does for as
    /// long as this row (`self`) is in use.
    @usableFromInline func bytes(of column: String) throws(PostgresError) -> UnsafeBufferPointer<UInt8>? {
        guard let index = storage.columnIndex(column) else {
            throw PostgresError(kind: .decoding, message: "the result has no column \"\(column)\"")
        }
        return storage.bytes(row: row, column: index)
    }

    @inlinable func value<T: PostgresDecodable>(
        of column: String, from text: UnsafeBufferPointer<UInt8>
    ) throws(PostgresError) -> T {
        do {
            return try T(postgresBytes: text)
        } catch {
            throw PostgresError(kind: .decoding, message: "column \"\(column)\": \(error.message)")
        }
    }

    /// The raw text of `column`; nil for SQL NULL or a column the result does not have.
    public subscript(column: String) -> String? {
        guard let index = storage.columnIndex(column) else { return nil }
        return storage.bytes(row: row, column: index).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// Owns a PGresult (PQclear on deinit). Immutable after init, as libpq guarantees for the PGresult itself.
@usableFromInline final class ResultStorage: @unchecked Sendable {
    private let result: OpaquePointer
    let rowCount: Int

    init(_ result: OpaquePointer) {
        self.result = result
        rowCount = Int(PQntuples(result))
    }

    deinit {
        PQclear(result)
    }

    // Read from the PGresult when asked: most statements' callers read their rows by name and nothing else.
    var columns: [String] { (0..<PQnfields(result)).map { String(cString: PQfname(result, $0)) } }
    var commandTag: String { String(cString: PQcmdStatus(result)) }
    var rowsAffected: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

    /// The first column named `name`, compared with libpq's names byte for byte (PQfnumber would fold unquoted
    /// names to lower case): a scan of a few columns, making no string of theirs.
    func columnIndex(_ name: String) -> Int32? {
        var name = name
        return name.withUTF8 { name in
            for column in 0..<PQnfields(result) {
                guard let field = PQfname(result, column), strlen(field) == name.count else { continue }
                if name.isEmpty || memcmp(field, name.baseAddress!, name.count) == 0 { return column }
            }
            return nil
        }
    }

    func bytes(row: Int32, column: Int32) -> UnsafeBufferPointer<UInt8>? {
        if PQgetisnull(result, row, column) != 0 { return nil }
        return PQgetvalue(result, row, column).withMemoryRebound(to: UInt8.self, capacity: 1) {
            UnsafeBufferPointer(start: $0, count: Int(PQgetlength(result, row, column)))
        }
    }
}
