import Foundation
import Postgres

/// The cluster a test process shares: started on first use, stopped and deleted at exit (or, killed, by its
/// watchdog).
private struct SharedCluster: Sendable {
    let cluster: EmbeddedPostgres
    /// Read before exit: asking a stopped cluster for its socket would start it again.
    let socketDirectory: URL

    static let started: Result<SharedCluster, PostgresError> = {
        do throws(PostgresError) {
            let cluster = EmbeddedPostgres(
                directory: try ThrowawayDirectory.make("embedded-postgres"), durable: false, log: { _ in })
            let shared = SharedCluster(cluster: cluster, socketDirectory: try cluster.socket().directory)
            atexit { SharedCluster.remove() }
            try cluster.stopsWithThisProcess()
            return .success(shared)
        } catch {
            return .failure(error)
        }
    }()

    private static func remove() {
        guard case .success(let shared) = started else { return }
        shared.cluster.stop()
        try? FileManager.default.removeItem(at: shared.cluster.directory)
        try? FileManager.default.removeItem(at: shared.socketDirectory)
    }
}

extension EmbeddedPostgres {
    /// A throwaway cluster (no fsync) in a temporary directory, started once per process and shared by all its
    /// tests, stopped and deleted at exit. Tests take an isolated database each with `createDatabase(_:)`.
    public static func shared() throws(PostgresError) -> EmbeddedPostgres {
        try SharedCluster.started.get().cluster
    }
}
