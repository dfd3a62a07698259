import Foundation
import LoyaltyTesting
import Postgres
import Testing

@Suite struct EmbeddedPostgresTests {
    @Test func aClusterKeepsItsDataAcrossLaunchers() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = EmbeddedPostgres(directory: directory, log: { _ in })
        defer { first.stop() }
        let conninfo = try first.createDatabase("kept")
        try PostgresConnection(conninfo: conninfo).execute(script: "CREATE TABLE t (n int); INSERT INTO t VALUES (7);")

        // A second launcher on the same directory adopts the running server.
        let second = EmbeddedPostgres(directory: directory, log: { _ in })
        #expect(try second.createDatabase("kept") == conninfo)
        second.stop()
        second.stop()  // idempotent
        #expect(throws: PostgresError.self) { try PostgresConnection(conninfo: conninfo) }

        // Started again, the cluster still has the data.
        _ = try first.start()
        let value = try PostgresConnection(conninfo: conninfo).query("SELECT n FROM t")[0].decode("n", as: Int.self)
        #expect(value == 7)
    }

    /// PostgreSQL runs as `postgres` when we are root; a directory that user cannot reach moves the cluster.
    @Test(.enabled(if: geteuid() == 0 || runningUnderCI, "runs only as root"))
    func asRootAnUnreachableDirectoryMovesTheCluster() throws {
        try #require(geteuid() == 0, "runs only as root (as CI and `make test` with apt do)")
        let privateParent = temporaryDirectory()
        try FileManager.default.createDirectory(at: privateParent, withIntermediateDirectories: true)
        #expect(chmod(privateParent.path, 0o700) == 0)
        defer { try? FileManager.default.removeItem(at: privateParent) }
        let notices = Tally()
        let cluster = EmbeddedPostgres(directory: privateParent.appendingPathComponent("cluster")) { _ in
            notices.record(1)
        }
        defer {
            cluster.stop()
            if let moved = cluster.clusterDirectory { try? FileManager.default.removeItem(at: moved) }
        }
        let connection = try PostgresConnection(conninfo: try cluster.start())
        let user = try connection.query("SELECT current_user AS u")[0].decode("u", as: String.self)
        #expect(user == "postgres")
        let moved = try #require(cluster.clusterDirectory)
        #expect(moved.path.hasPrefix("/var/lib/embedded-postgres/cluster-"))
        #expect(notices.recorded.count == 1)
        let owner = try FileManager.default.attributesOfItem(atPath: moved.path)[.ownerAccountName] as? String
        #expect(owner == "postgres")
    }

    /// A daemon started while another thread holds a pipe must not keep the pipe's write end: its reader would
    /// wait for an end of file as long as the daemon runs (a test run once hung so on a curl's output).
    @Test func aLaunchedProgramHoldsNoneOfOurDescriptors() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let child = try EmbeddedPostgres.launch(["/bin/sleep", "30"], output: nil)
        defer {
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        close(ends[1])
        var reader = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
        #expect(poll(&reader, 1, 5000) == 1, "the child kept the pipe's write end open")
        var byte: UInt8 = 0
        #expect(read(ends[0], &byte, 1) == 0)
    }

    @Test func aHundredThousandRowsDecodeExactly() throws {
        let connection = try freshDatabase()
        let rows = try connection.query(
            """
            SELECT gen_random_uuid() AS id, 'offer ' || n AS title, n AS major, n % 65536 AS minor,
                   now() + n * interval '1 second' AS valid_until, n % 2 = 0 AS active
            FROM generate_series(1, 100000) AS n
            """)
        var checksum = 0
        for row in rows {
            _ = try row.decode("id", as: UUID.self)
            checksum += try row.decode("title", as: String.self).utf8.count
            checksum += try row.decode("major", as: Int.self)
            checksum += Int(try row.decode("minor", as: UInt16.self))
            _ = try row.decode("valid_until", as: Date.self)
            checksum += try row.decode("active", as: Bool.self) ? 1 : 0
        }
        let expected = (1...100_000).reduce(0) { sum, n in
            sum + "offer \(n)".utf8.count + n + n % 65536 + (n % 2 == 0 ? 1 : 0)
        }
        #expect(rows.count == 100_000)
        #expect(checksum == expected)
    }
}
