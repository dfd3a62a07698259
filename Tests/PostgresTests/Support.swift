import Foundation
import LoyaltyTesting
import Postgres

/// A database of its own in the process's shared cluster.
func freshDatabase() throws -> PostgresConnection {
    try PostgresConnection(conninfo: freshDatabaseConninfo())
}

func freshDatabaseConninfo() throws -> String {
    try EmbeddedPostgres.shared().createDatabase("test_\(UUID().uuidString.lowercased())")
}

/// A directory of its own under the temporary directory, deleted by the caller.
func temporaryDirectory() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("postgres-tests-\(UUID().uuidString)")
}

struct DeliberateFailure: Error {}

/// Values recorded by several threads.
final class Tally: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var values: [Int] = []

    func record(_ value: Int) {
        lock.withLock { values.append(value) }
    }

    var recorded: [Int] { lock.withLock { values } }
}
