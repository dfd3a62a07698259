import Foundation
import LoyaltyTesting
import Postgres
import Testing

@Suite struct ConnectionTests {
    @Test func uniqueViolationCarriesItsSQLState() throws {
        let connection = try freshDatabase()
        try connection.execute(script: "CREATE TABLE accounts (email text CONSTRAINT accounts_email_key UNIQUE);")
        try connection.query("INSERT INTO accounts VALUES (\("a@example.com"))")
        let error = #expect(throws: PostgresError.self) {
            try connection.query("INSERT INTO accounts VALUES (\("a@example.com"))")
        }
        #expect(error?.kind == .sql)
        #expect(error?.sqlState == PostgresError.SQLState.uniqueViolation)
        #expect(error?.isUniqueViolation == true)
        #expect(error?.constraintName == "accounts_email_key")
        #expect(connection.isHealthy)
    }

    @Test func syntaxErrorsAndNULBytesAreTypedErrors() throws {
        let connection = try freshDatabase()
        let syntax = #expect(throws: PostgresError.self) { try connection.query("SELEKT 1") }
        #expect(syntax?.sqlState == PostgresError.SQLState.syntaxError)
        #expect(syntax?.kind == .sql)
        let nul = #expect(throws: PostgresError.self) { try connection.query("SELECT \("a\u{0}b")::text") }
        #expect(nul?.kind == .sql)
        #expect(try connection.query("SELECT 1 AS one")[0].decode("one", as: Int.self) == 1)
    }

    @Test func rowsAffectedCountsTheCommandsRows() throws {
        let connection = try freshDatabase()
        try connection.execute(script: "CREATE TABLE t (n int); INSERT INTO t SELECT generate_series(1, 5);")
        #expect(try connection.query("UPDATE t SET n = n + 1 WHERE n > \(2)").rowsAffected == 3)
        #expect(try connection.query("DELETE FROM t WHERE n > \(100)").rowsAffected == 0)
        let all = try connection.query("SELECT n FROM t ORDER BY n")
        #expect(try all.map { try $0.decode("n", as: Int.self) } == [1, 2, 4, 5, 6])
        #expect(all.columns == ["n"])
    }

    @Test func transactionCommitsOrRollsBack() throws {
        let connection = try freshDatabase()
        try connection.execute(script: "CREATE TABLE t (n int);")
        #expect(throws: DeliberateFailure.self) {
            try connection.transaction { connection in
                try connection.query("INSERT INTO t VALUES (\(1))")
                throw DeliberateFailure()
            }
        }
        let committed = try connection.transaction { connection in
            try connection.query("INSERT INTO t VALUES (\(2)) RETURNING n")[0].decode("n", as: Int.self)
        }
        #expect(committed == 2)
        // A failed statement whose error the body swallowed: COMMIT rolls back, and says so.
        let swallowed = #expect(throws: PostgresError.self) {
            try connection.transaction { connection in
                try connection.query("INSERT INTO t VALUES (\(3))")
                _ = try? connection.query("SELECT 1 / \(0)")
            }
        }
        #expect(swallowed?.sqlState == PostgresError.SQLState.inFailedSQLTransaction)
        #expect(try connection.query("SELECT n FROM t").map { try $0.decode("n", as: Int.self) } == [2])
    }

    @Test func readOnlySnapshotTransactionReadsOneSnapshotAndWritesNothing() throws {
        let connection = try freshDatabase()
        try connection.execute(script: "CREATE TABLE t (n int); INSERT INTO t VALUES (1);")
        let isolation = try connection.transaction(readOnlySnapshot: true) { connection in
            try connection.query("SHOW transaction_isolation")[0].decode("transaction_isolation", as: String.self)
        }
        #expect(isolation == "repeatable read")
        let write = #expect(throws: PostgresError.self) {
            try connection.transaction(readOnlySnapshot: true) { connection in
                try connection.query("INSERT INTO t VALUES (\(2))")
            }
        }
        #expect(write?.sqlState == "25006")  // read_only_sql_transaction
        #expect(try connection.query("SELECT n FROM t").map { try $0.decode("n", as: Int.self) } == [1])
        // An ordinary transaction after it is read committed and writes again.
        try connection.transaction { connection in
            #expect(
                try connection.query("SHOW transaction_isolation")[0].decode("transaction_isolation", as: String.self)
                    == "read committed")
            try connection.query("INSERT INTO t VALUES (\(3))")
        }
    }

    @Test func aSnapshotRunsItsStatementsInOneReadOnlyTransactionAndStopsAtTheFirstFailure() throws {
        let connection = try freshDatabase()
        try connection.execute(script: "CREATE TABLE t (n int); INSERT INTO t VALUES (1), (2), (3);")
        let results = try connection.snapshot([
            "SHOW transaction_isolation", "SHOW transaction_read_only",
            "SELECT n FROM t WHERE n >= \(2) ORDER BY n", "SELECT txid_current_if_assigned() IS NULL AS reading",
        ])
        #expect(results.count == 4)
        #expect(try results[0][0].decode("transaction_isolation", as: String.self) == "repeatable read")
        #expect(try results[1][0].decode("transaction_read_only", as: String.self) == "on")
        #expect(try results[2].map { try $0.decode("n", as: Int.self) } == [2, 3])
        #expect(try results[3][0].decode("reading", as: Bool.self))

        // The statement after the failing one never runs: it would have taken a session lock (which no rollback
        // releases).
        let failure = #expect(throws: PostgresError.self) {
            try connection.snapshot([
                "SELECT n FROM t", "SELECT 1 / \(0)", "SELECT pg_advisory_lock(\(42))",
            ])
        }
        #expect(failure?.sqlState == "22012")  // division_by_zero
        let locks: Int = try connection.query(
            "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()")[0].decode("n")
        #expect(locks == 0)
        // A write fails as in any read-only transaction, and the connection is left ready for the next statement.
        let write = #expect(throws: PostgresError.self) { try connection.snapshot(["INSERT INTO t VALUES (\(4))"]) }
        #expect(write?.sqlState == "25006")
        #expect(try connection.query("SELECT count(*) AS n FROM t")[0].decode("n", as: Int.self) == 3)
        #expect(throws: PostgresError.self) { try connection.snapshot(["SELECT \("nul\u{0}")"]) }
        #expect(try connection.snapshot(["SELECT 1 AS one"])[0][0].decode("one", as: Int.self) == 1)
    }

    @Test func connectionErrorsNeverShowThePassword() {
        for conninfo in [
            "host=/nonexistent-socket-dir port=5 user=u password=hunter2 connect_timeout=1",
            "postgresql://u:hunter2@localhost:1/db",
            "host=/x password=hunter2 dangling",
            "postgresql://u:hunter2@%zz/db",
        ] {
            let error = #expect(throws: PostgresError.self) { try PostgresConnection(conninfo: conninfo) }
            #expect(error?.kind == .unavailable)
            #expect(error.map { !$0.description.contains("hunter2") && !$0.message.isEmpty } == true)
        }
    }

    @Test func createDatabaseQuotesTheNameAndKeepsAnExistingDatabase() throws {
        let cluster = try EmbeddedPostgres.shared()
        let name = "test \"quoted\"; DROP DATABASE postgres; \(UUID().uuidString.prefix(8))"
        let connection = try PostgresConnection(conninfo: try cluster.createDatabase(name))
        #expect(try connection.query("SELECT current_database() AS name")[0].decode("name", as: String.self) == name)
        try connection.execute(script: "CREATE TABLE kept (n int);")
        let again = try PostgresConnection(conninfo: try cluster.createDatabase(name))
        #expect(try again.query("SELECT count(*) AS n FROM kept")[0].decode("n", as: Int.self) == 0)
        #expect(throws: PostgresError.self) { try cluster.createDatabase(String(repeating: "x", count: 64)) }
    }
}
