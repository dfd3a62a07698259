import Foundation
import Postgres
import Testing

@Suite struct PoolTests {
    @Test func concurrentCallersShareAFixedNumberOfConnections() throws {
        let pool = PostgresPool(conninfo: try freshDatabaseConninfo(), size: 4)
        try pool.withConnection {
            try $0.execute(script: "CREATE TABLE counter (n int); INSERT INTO counter VALUES (0);")
        }
        let inUse = Tally()
        let failures = Tally()
        let threads = 50
        let incrementsPerThread = 20
        let done = DispatchGroup()
        for _ in 0..<threads {
            done.enter()
            Thread {
                defer { done.leave() }
                for _ in 0..<incrementsPerThread {
                    do {
                        try pool.withConnection { connection in
                            inUse.record(pool.inUse)
                            try connection.query("UPDATE counter SET n = n + \(1)")
                        }
                    } catch {
                        failures.record(1)
                    }
                }
            }.start()
        }
        done.wait()
        #expect(failures.recorded.isEmpty)
        #expect(inUse.recorded.max() ?? 0 <= 4)
        #expect(inUse.recorded.max() ?? 0 > 1, "callers should have overlapped")
        #expect(pool.inUse == 0)
        let total = try pool.withConnection { try $0.query("SELECT n FROM counter")[0].decode("n", as: Int.self) }
        #expect(total == threads * incrementsPerThread)
    }

    @Test func aConnectionThatDiesInUseIsReplaced() throws {
        let pool = PostgresPool(conninfo: try freshDatabaseConninfo(), size: 1)
        let error = #expect(throws: PostgresError.self) {
            try pool.withConnection { connection in
                try connection.query("SELECT pg_terminate_backend(pg_backend_pid())")
            }
        }
        #expect(error?.kind == .unavailable)
        #expect(pool.inUse == 0)
        #expect(try pool.withConnection { try $0.query("SELECT 1 AS one")[0].decode("one", as: Int.self) } == 1)
    }

    @Test func aLeftOpenTransactionIsRolledBackBeforeReuse() throws {
        let pool = PostgresPool(conninfo: try freshDatabaseConninfo(), size: 1)
        try pool.withConnection { try $0.execute(script: "CREATE TABLE t (n int);") }
        try pool.withConnection { connection in
            try connection.query("BEGIN")
            try connection.query("INSERT INTO t VALUES (\(1))")
        }
        let count = try pool.withConnection { connection in
            try connection.query("SELECT count(*) AS n FROM t")[0].decode("n", as: Int.self)
        }
        #expect(count == 0)
    }

    @Test func poolAnswersUnavailableWhileTheDatabaseIsDownAndRecoversAfter() throws {
        let directory = temporaryDirectory()
        let cluster = EmbeddedPostgres(directory: directory, log: { _ in })
        defer {
            cluster.stop()
            try? FileManager.default.removeItem(at: directory)
        }
        let pool = PostgresPool(conninfo: try cluster.createDatabase("recovery"), size: 3)
        // Open all three connections, so that three idle ones go stale when the server stops.
        try pool.withConnection { first in
            try pool.withConnection { second in
                try pool.withConnection { third in
                    try first.execute(script: "CREATE TABLE t (n int);")
                    try second.query("SELECT 1")
                    try third.query("SELECT 1")
                }
            }
        }

        cluster.stop()
        for _ in 0..<3 {
            let error = #expect(throws: PostgresError.self) { try pool.withConnection { try $0.query("SELECT 1") } }
            #expect(error?.kind == .unavailable)
        }
        #expect(pool.inUse == 0)

        _ = try cluster.start()
        try insertThroughThreeConnections(pool)

        // A restart the pool did not witness: its idle connections are stale, and are noticed as such before a
        // statement fails on them.
        cluster.stop()
        _ = try cluster.start()
        try insertThroughThreeConnections(pool)

        let count = try pool.withConnection { try $0.query("SELECT count(*) AS n FROM t")[0].decode("n", as: Int.self) }
        #expect(count == 6)
    }

    private func insertThroughThreeConnections(_ pool: PostgresPool) throws {
        try pool.withConnection { first in
            try pool.withConnection { second in
                try pool.withConnection { third in
                    try first.query("INSERT INTO t VALUES (\(1))")
                    try second.query("INSERT INTO t VALUES (\(2))")
                    try third.query("INSERT INTO t VALUES (\(3))")
                }
            }
        }
    }
}
