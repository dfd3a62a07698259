import Foundation
import LoyaltyTesting
import Postgres
import Testing

@Suite struct PgBouncerTests {
    /// Six callers, each with a client connection of its own, share two server connections: transactions with
    /// SET TRANSACTION and a transaction-level advisory lock (what the service uses) all commit, and PostgreSQL
    /// never sees more than two connections to the database. Stopped, PgBouncer refuses and leaves no files.
    @Test func transactionsOfManyClientsShareAFewServerConnections() throws {
        let cluster = try EmbeddedPostgres.shared()
        let database = "bouncer_\(UUID().uuidString.prefix(8).lowercased())"
        let direct = PostgresPool(conninfo: try cluster.createDatabase(database), size: 1)
        try direct.withConnection { try $0.execute(script: "CREATE TABLE t (client int, n int)") }
        let bouncer = try PgBouncer(frontOf: cluster, poolSize: 2)
        let pool = PostgresPool(conninfo: bouncer.conninfo(database: database), size: 6)
        let serverConnections = Tally()
        let failures = Tally()
        let done = DispatchGroup()
        for client in 0..<6 {
            done.enter()
            Thread {
                defer { done.leave() }
                for n in 0..<20 {
                    do {
                        try pool.withConnection { connection in
                            try connection.transaction { connection in
                                try connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                                try connection.query("SELECT pg_advisory_xact_lock(\(client))")
                                try connection.query("INSERT INTO t VALUES (\(client), \(n))")
                            }
                        }
                        serverConnections.record(
                            try direct.withConnection { connection in
                                try connection.query(
                                    "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = \(database)"
                                )[0].decode("n")
                            })
                    } catch {
                        failures.record(client)
                    }
                }
            }.start()
        }
        done.wait()
        #expect(failures.recorded.isEmpty)
        let rows = try direct.withConnection {
            try $0.query("SELECT count(*) AS n FROM t")[0].decode("n", as: Int.self)
        }
        #expect(rows == 120)
        // The direct connection is one of them.
        #expect(serverConnections.recorded.max() ?? 0 <= 3)
        #expect(pool.inUse == 0)

        bouncer.stop()
        let refused = #expect(throws: PostgresError.self) {
            try PostgresConnection(conninfo: bouncer.conninfo(database: database))
        }
        #expect(refused?.kind == .unavailable)
        #expect(!FileManager.default.fileExists(atPath: bouncer.directory.path))
    }
}

@Suite struct PgBouncerOutageTests {
    /// PostgreSQL stopped behind PgBouncer: a caller gets `.unavailable` (the server's 503) once PgBouncer gives
    /// up waiting for a server connection (query_wait_timeout), and the same pool works again once PostgreSQL is
    /// back.
    @Test func aDatabaseDownBehindPgBouncerIsUnavailableAndRecovers() throws {
        let directory = temporaryDirectory()
        let cluster = EmbeddedPostgres(directory: directory, log: { _ in })
        defer {
            cluster.stop()
            try? FileManager.default.removeItem(at: directory)
        }
        _ = try cluster.createDatabase("outage")
        let bouncer = try PgBouncer(frontOf: cluster, queryWaitTimeout: 1)
        defer { bouncer.stop() }
        let pool = PostgresPool(conninfo: bouncer.conninfo(database: "outage"), size: 2)
        #expect(try pool.withConnection { try $0.query("SELECT 1 AS one")[0].decode("one", as: Int.self) } == 1)

        cluster.stop()
        let error = #expect(throws: PostgresError.self) { try pool.withConnection { try $0.query("SELECT 1") } }
        #expect(error?.kind == .unavailable)

        _ = try cluster.start()
        var recovered = false
        for _ in 0..<100 where !recovered {
            recovered = (try? pool.withConnection { try $0.query("SELECT 1") }) != nil
            if !recovered { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(recovered)
    }
}
