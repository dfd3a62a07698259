import Foundation
import Postgres
import SystemCalls

/// A primary of its own and a real streaming standby of it, made with `pg_basebackup -R`: for the tests of
/// reads on standbys, of a standby that lags (replay paused) and of a failover (the primary stopped, the standby
/// promoted). Both are throwaway clusters (Unix sockets only) in one temporary directory, removed by `remove()`.
///
/// The primary keeps fsync and full-page writes on: a base backup of a server without full-page writes cannot be
/// made consistent. As root both run as `postgres`, like every test cluster.
public final class StreamingStandby: @unchecked Sendable {  // immutable after init; the clusters lock themselves
    public let primary: EmbeddedPostgres
    public let standby: EmbeddedPostgres
    private let directory: URL

    /// Starts the primary, takes the base backup while it runs and starts the standby on it.
    public init() throws(PostgresError) {
        directory = try ThrowawayDirectory.make("streaming-standby")
        let serverUser = geteuid() == 0 ? getpwnam("postgres") : nil
        if let serverUser {
            try EmbeddedPostgres.own(directory, by: (serverUser.pointee.pw_uid, serverUser.pointee.pw_gid))
        }
        primary = EmbeddedPostgres(directory: directory.appendingPathComponent("primary"), durable: true, log: { _ in })
        let socket = try primary.socket()

        let standbyDirectory = directory.appendingPathComponent("standby")
        guard mkdir(standbyDirectory.path, 0o700) == 0 else {
            throw PostgresError(kind: .launcher, message: "cannot create \(standbyDirectory.path): \(errorText())")
        }
        if let serverUser {
            try EmbeddedPostgres.own(standbyDirectory, by: (serverUser.pointee.pw_uid, serverUser.pointee.pw_gid))
        }
        let backup = [
            try EmbeddedPostgres.findBinaries().appendingPathComponent("pg_basebackup").path,
            "-h", socket.directory.path, "-p", "\(socket.port)", "-U", "postgres",
            "-D", standbyDirectory.appendingPathComponent("data").path, "-R", "-X", "stream", "--no-sync",
        ]
        guard
            try EmbeddedPostgres.spawn(
                backup, as: serverUser == nil ? nil : "postgres", in: directory, output: nil) == 0
        else {
            throw PostgresError(kind: .launcher, message: "pg_basebackup of the primary failed")
        }
        standby = EmbeddedPostgres(directory: standbyDirectory, durable: false, log: { _ in })
        _ = try standby.start()
        try primary.stopsWithThisProcess()
        try standby.stopsWithThisProcess()
    }

    /// A new database on the primary, once the standby has it too: the conninfo of each.
    public func createDatabase(_ name: String) throws(PostgresError) -> (primary: String, standby: String) {
        let onPrimary = try primary.createDatabase(name)
        try waitForReplay()
        return (onPrimary, try standby.conninfo(database: name))
    }

    /// `host=<primary>,<standby>` with `target_session_attrs=read-write`: what a server's DATABASE_URL names to
    /// follow a failover, whichever of the two is the primary.
    public func bothMembers(database name: String) throws(PostgresError) -> String {
        let hosts = [try primary.socket().directory.path, try standby.socket().directory.path]
        return "host=\(EmbeddedPostgres.conninfoQuoted(hosts.joined(separator: ","))) port=5432,5432 "
            + "dbname=\(EmbeddedPostgres.conninfoQuoted(name)) user=postgres target_session_attrs=read-write"
    }

    /// Waits (up to 30 s) until the standby has replayed everything the primary has written so far.
    public func waitForReplay() throws(PostgresError) {
        let written: String = try PostgresConnection(conninfo: primary.start())
            .query("SELECT pg_current_wal_lsn()::text AS lsn")[0].decode("lsn")
        let standbyConnection = try PostgresConnection(conninfo: standby.start())
        let deadline = Date().addingTimeInterval(30)
        while true {
            let replayed: Bool = try standbyConnection.query(
                "SELECT pg_last_wal_replay_lsn() >= \(written)::pg_lsn AS replayed")[0].decode("replayed")
            if replayed { return }
            guard Date() < deadline else {
                throw PostgresError(kind: .launcher, message: "the standby did not replay \(written) within 30 s")
            }
            usleep(20_000)
        }
    }

    /// Stops (or resumes) the standby's replay: it still receives the primary's WAL, so it lags more and more.
    public func pauseReplay() throws(PostgresError) {
        try PostgresConnection(conninfo: standby.start()).query("SELECT pg_wal_replay_pause()")
    }

    public func resumeReplay() throws(PostgresError) {
        try PostgresConnection(conninfo: standby.start()).query("SELECT pg_wal_replay_resume()")
    }

    /// The standby becomes a primary (pg_promote, waiting until it takes writes).
    public func promoteStandby() throws(PostgresError) {
        let promoted: Bool = try PostgresConnection(conninfo: standby.start())
            .query("SELECT pg_promote(true, 30) AS promoted")[0].decode("promoted")
        guard promoted else { throw PostgresError(kind: .launcher, message: "the standby was not promoted in 30 s") }
    }

    /// Stops both clusters and deletes their directory.
    public func remove() {
        standby.stop()
        primary.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
