import Foundation
import Postgres

/// What a test starts outside itself (clusters, standbys, PgBouncer) is stopped by exit handlers, which a test
/// process killed before them (a deadline's SIGKILL, a crash) never runs: the daemons would outlive it. So each is
/// also watched by a shell in a session of its own (a signal to the test's process group spares it) that waits
/// for this process to be gone, then stops and removes it. After a clean exit it finds nothing left to do.
enum OrphanWatch {
    /// Runs `script` (sh) once this process has ended.
    static func whenThisProcessEnds(run script: String) {
        let watch = "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done\n" + script
        // A watchdog that cannot start leaves only what a clean exit stops anyway.
        _ = try? EmbeddedPostgres.launch(["/usr/bin/setsid", "/bin/sh", "-c", watch], output: nil)
    }

    /// `text` as one word for sh.
    static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'" }

    /// sh that sends `signal` to the process `pid` (a word of sh: a number, or "$pid") only if its command line
    /// names `path`: a pid noted long ago may be another process's by now.
    static func signal(_ signal: String, _ pid: String, ifItsCommandNames path: URL) -> String {
        "tr '\\0' ' ' < /proc/\(pid)/cmdline 2>/dev/null | grep -qF -- \(quoted(path.path)) && kill -\(signal) \(pid)"
    }
}

extension EmbeddedPostgres {
    /// Once this process has ended, the throwaway cluster's postmaster gets SIGQUIT (an immediate stop, as
    /// `pg_ctl stop -m immediate`) and its directories are removed. The postmaster is found by the lock file of
    /// its socket at that time, so a cluster stopped and started again (a failover test's) is still found.
    func stopsWithThisProcess() throws(PostgresError) {
        let socket = try socket()
        let directories = [directory, socket.clusterDirectory, socket.directory].map { OrphanWatch.quoted($0.path) }
        OrphanWatch.whenThisProcessEnds(
            run: """
                for lock in \(OrphanWatch.quoted(socket.directory.path))/.s.PGSQL.*.lock; do
                    pid=$(head -n 1 "$lock" 2>/dev/null) \
                        && \(OrphanWatch.signal("QUIT", "\"$pid\"", ifItsCommandNames: socket.clusterDirectory)) || continue
                    tries=0
                    while kill -0 "$pid" 2>/dev/null && [ $tries -lt 300 ]; do sleep 0.1; tries=$((tries + 1)); done
                done
                rm -rf \(directories.joined(separator: " "))
                """)
    }
}
