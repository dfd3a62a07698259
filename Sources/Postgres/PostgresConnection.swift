internal import CLibPQ
import Foundation

/// One libpq connection. Not thread-safe: confine it to one thread at a time (the pool hands it out).
///
/// Every statement goes through `PQexecParams` as an unnamed statement with text parameters, so nothing is kept
/// in the session between statements: the connection works behind PgBouncer's transaction pooling.
public final class PostgresConnection {
    let handle: OpaquePointer
    /// What `StandbyReads` last found this connection's server to be; it checks again once this is old.
    var standbyStatus: StandbyStatus?
    /// When the pool last took the connection back.
    var idleSince = ContinuousClock.now

    /// Connects with a libpq connection string (`host=... dbname=...` or `postgresql://...`). Unless the string says
    /// otherwise, connecting gives up after 2 seconds; the client encoding is always UTF-8.
    public init(conninfo: String) throws(PostgresError) {
        var parseError: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &parseError) else {
            // libpq's parse errors quote pieces of the string, which may be the password: say less.
            if let parseError { PQfreemem(parseError) }
            throw PostgresError(kind: .unavailable, message: "the connection string is malformed")
        }
        var password: String?
        var option = options
        while let keyword = option.pointee.keyword {
            if String(cString: keyword) == "password", let value = option.pointee.val {
                password = String(cString: value)
            }
            option += 1
        }
        PQconninfoFree(options)

        // Keywords before "dbname" are defaults the connection string may override; those after it always win.
        let keywords = ["connect_timeout", "dbname", "client_encoding"]
        let values = ["2", conninfo, "UTF8"]
        let connection = withCStringArray(keywords) { keywords in
            withCStringArray(values) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let connection else {
            throw PostgresError(kind: .unavailable, message: "libpq could not allocate a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            var message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            if let password, !password.isEmpty {
                message = message.replacingOccurrences(of: password, with: "********")
            }
            throw PostgresError(kind: .unavailable, message: Self.trimmed(message))
        }
        // libpq prints notices (and a server's goodbye to an idle connection) on stderr by default: keep quiet.
        PQsetNoticeReceiver(connection, { _, _ in }, nil)
        handle = connection
    }

    deinit {
        PQfinish(handle)
    }

    /// Whether libpq can parse `conninfo` (a key=value string or a URL), without connecting.
    public static func isWellFormed(conninfo: String) -> Bool {
        var parseError: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(conninfo, &parseError) else {
            if let parseError { PQfreemem(parseError) }
            return false
        }
        PQconninfoFree(options)
        return true
    }

    /// Runs one statement with bound parameters (PQexecParams, unnamed statement, text format).
    @discardableResult
    public func query(_ query: PostgresQuery) throws(PostgresError) -> PostgresResult {
        try Self.rejectNUL(in: query)
        let result = withCStringArray(query.parameters) { values in
            PQexecParams(handle, query.sql, Int32(query.parameters.count), nil, values, nil, nil, 0)
        }
        return PostgresResult(try checked(result))
    }

    /// Runs read-only statements in one REPEATABLE READ, READ ONLY transaction (they all read one snapshot), in
    /// one round trip: BEGIN, the statements and COMMIT go out together in libpq's pipeline mode, each still an
    /// unnamed statement with text parameters, and their answers come back together. For statements that need
    /// no answer of another; each round trip saved is a wait, and a wake-up, on both sides. The first statement
    /// that fails throws, and those after it do not run.
    public func snapshot(_ queries: [PostgresQuery]) throws(PostgresError) -> [PostgresResult] {
        do {
            return Array(
                try pipeline(["BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"] + queries + ["COMMIT"])
                    .dropFirst().dropLast())
        } catch {
            // A failed statement leaves the transaction open and aborted: the COMMIT after it never ran.
            if isHealthy && !isIdle { _ = try? query("ROLLBACK") }
            throw error
        }
    }

    /// Sends `queries` together in pipeline mode, followed by one Sync, and reads their answers in order.
    private func pipeline(_ queries: [PostgresQuery]) throws(PostgresError) -> [PostgresResult] {
        for query in queries { try Self.rejectNUL(in: query) }
        guard PQenterPipelineMode(handle) == 1 else { throw failure() }
        defer { PQexitPipelineMode(handle) }
        for query in queries {
            let sent = withCStringArray(query.parameters) { values in
                PQsendQueryParams(handle, query.sql, Int32(query.parameters.count), nil, values, nil, nil, 0)
            }
            guard sent == 1 else { throw failure() }
        }
        guard PQpipelineSync(handle) == 1 else { throw failure() }
        // Each statement's answer is followed by a NULL; those after a failed one answer PIPELINE_ABORTED. The
        // Sync's own answer ends the pipeline.
        var results: [PostgresResult] = []
        var firstError: PostgresError?
        var index = 0
        while true {
            guard let result = PQgetResult(handle) else {
                index += 1
                // More ends than statements: the connection broke before the Sync was answered.
                if index > queries.count { throw firstError ?? failure() }
                continue
            }
            switch PQresultStatus(result) {
            case PGRES_PIPELINE_SYNC:
                PQclear(result)
                if let firstError { throw firstError }
                return results
            case PGRES_PIPELINE_ABORTED:
                PQclear(result)
            default:
                do {
                    let checkedResult = try checked(result)
                    if firstError == nil && results.count == index {
                        results.append(PostgresResult(checkedResult))
                    } else {
                        PQclear(checkedResult)
                    }
                } catch {
                    // A broken connection answers nothing more, not even the Sync: stop reading now.
                    guard isHealthy else { throw firstError ?? error }
                    firstError = firstError ?? error
                }
            }
        }
    }

    private static func rejectNUL(in query: PostgresQuery) throws(PostgresError) {
        if containsNUL(query.sql) || query.parameters.contains(where: { $0.map(containsNUL) ?? false }) {
            throw PostgresError(
                kind: .sql, sqlState: PostgresError.SQLState.characterNotInRepertoire,
                message: "PostgreSQL text cannot contain a NUL byte")
        }
    }

    /// Runs a trusted script of several statements (PQexec), such as the schema. Never pass it user data.
    public func execute(script: String) throws(PostgresError) {
        guard !containsNUL(script) else {
            throw PostgresError(
                kind: .sql, sqlState: PostgresError.SQLState.characterNotInRepertoire,
                message: "PostgreSQL text cannot contain a NUL byte")
        }
        PQclear(try checked(PQexec(handle, script)))
    }

    /// Runs `body` between BEGIN and COMMIT; a throw from `body` rolls back and is rethrown. With `readOnlySnapshot`
    /// the transaction is REPEATABLE READ, READ ONLY (every statement reads one snapshot, none writes), set by the
    /// BEGIN itself rather than by a SET TRANSACTION costing a round trip of its own.
    public func transaction<T>(readOnlySnapshot: Bool = false, _ body: (PostgresConnection) throws -> T) throws -> T {
        try query(readOnlySnapshot ? "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY" : "BEGIN")
        let value: T
        do {
            value = try body(self)
        } catch {
            _ = try? query("ROLLBACK")
            throw error
        }
        // COMMIT of a transaction in which a statement failed (and `body` swallowed the error) rolls back instead.
        if try query("COMMIT").commandTag == "ROLLBACK" {
            throw PostgresError(
                kind: .sql, sqlState: PostgresError.SQLState.inFailedSQLTransaction,
                message: "the transaction was rolled back because a statement in it failed")
        }
        return value
    }

    /// Whether libpq still considers the connection open (PQstatus == CONNECTION_OK).
    public var isHealthy: Bool { PQstatus(handle) == CONNECTION_OK }

    /// The server this connection reached, `host:port` (a Unix socket's directory as host): with a multi-host
    /// connection string, which of the hosts it is.
    public var server: String {
        "\(PQhost(handle).map { String(cString: $0) } ?? "?"):\(PQport(handle).map { String(cString: $0) } ?? "?")"
    }

    /// Whether the connection sits outside any transaction, ready for the next user.
    var isIdle: Bool { PQtransactionStatus(handle) == PQTRANS_IDLE }

    /// Reads whatever the server sent while the connection sat idle. A server that shut down (or restarted) has
    /// sent a termination notice and closed the socket: that turns the connection unhealthy here, before a
    /// caller's statement fails on it. Costs one poll(2) when nothing is pending.
    func absorbUnsolicitedInput() {
        for _ in 0..<4 {
            var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
            guard isHealthy, poll(&descriptor, 1, 0) > 0 else { return }
            guard PQconsumeInput(handle) != 0 else { return }
            _ = PQisBusy(handle)  // parses what was read: notices, parameter changes, the termination error
            while let notification = PQnotifies(handle) { PQfreemem(notification) }
        }
    }

    /// The connection's last error, when libpq answered no result at all.
    private func failure() -> PostgresError {
        PostgresError(
            kind: isHealthy ? .sql : .unavailable, message: Self.trimmed(String(cString: PQerrorMessage(handle))))
    }

    private func checked(_ result: OpaquePointer?) throws(PostgresError) -> OpaquePointer {
        guard let result else { throw failure() }
        let status = PQresultStatus(result)
        if status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || status == PGRES_EMPTY_QUERY {
            return result
        }
        defer { PQclear(result) }
        func field(_ code: Character) -> String? {
            PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) }
        }
        let sqlState = field("C")
        let message = field("M") ?? Self.trimmed(String(cString: PQresultErrorMessage(result)))
        if status != PGRES_FATAL_ERROR {
            throw PostgresError(kind: .sql, message: "unsupported result (\(String(cString: PQresStatus(status))))")
        }
        let unavailable = !isHealthy || sqlState.map(Self.meansUnavailable) ?? false
        throw PostgresError(
            kind: unavailable ? .unavailable : .sql, sqlState: sqlState, message: message, constraintName: field("n"))
    }

    /// Class 08 (connection exception) and the shutdown/startup states of class 57 mean "try again later"; so
    /// does a write refused as read-only (25006): the server is a standby, such as a primary being demoted in a
    /// failover, and the next connection finds the new primary.
    private static func meansUnavailable(_ sqlState: String) -> Bool {
        typealias Code = PostgresError.SQLState
        return sqlState.hasPrefix(Code.connectionExceptionClass)
            || [Code.adminShutdown, Code.crashShutdown, Code.cannotConnectNow, Code.readOnlySQLTransaction]
                .contains(sqlState)
    }

    private static func trimmed(_ message: String) -> String {
        message.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Calls `body` with a C array of NUL-terminated strings (nil entries stay NULL), valid only during the call.
private func withCStringArray<R>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
    // One buffer for all the strings: no allocation per parameter.
    let lengths = strings.map { $0.map { $0.utf8.count + 1 } ?? 0 }
    let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, lengths.reduce(0, +)))
    defer { storage.deallocate() }
    var pointers = [UnsafePointer<CChar>?](repeating: nil, count: strings.count + 1)
    var offset = 0
    for (index, string) in strings.enumerated() {
        guard let string else { continue }
        let slot = UnsafeMutableBufferPointer(rebasing: storage[offset..<offset + lengths[index]])
        _ = slot.initialize(from: string.utf8)
        slot[slot.count - 1] = 0
        pointers[index] = UnsafeRawPointer(slot.baseAddress!).assumingMemoryBound(to: CChar.self)
        offset += lengths[index]
    }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

/// Whether `text` holds a NUL byte, which libpq would take for the end of the string. memchr over the bytes: a
/// statement's text is hundreds of bytes, checked on every statement.
private func containsNUL(_ text: String) -> Bool {
    var text = text
    return text.withUTF8 { bytes in
        guard let base = bytes.baseAddress else { return false }
        return memchr(base, 0, bytes.count) != nil
    }
}
