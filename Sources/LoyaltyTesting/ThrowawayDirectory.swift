import Foundation
import Postgres
import SystemCalls

/// Where a test or the bench keeps a throwaway cluster, server or story: a new directory of its own.
public enum ThrowawayDirectory {
    /// A new directory named `prefix-` and six random characters in `parent`. With `postgresMayEnter`, it is made
    /// traversable (0711): as root the embedded PostgreSQL runs as `postgres`, which must reach its data below it.
    public static func make(
        _ prefix: String, in parent: URL = FileManager.default.temporaryDirectory, postgresMayEnter: Bool = false
    ) throws(PostgresError) -> URL {
        let directory: URL
        do throws(SystemCallError) {
            directory = try makeTemporaryDirectory(prefix + "-", in: parent)
        } catch {
            throw PostgresError(kind: .launcher, message: "cannot create a directory in \(parent.path): \(error)")
        }
        if postgresMayEnter { chmod(directory.path, 0o711) }
        return directory
    }
}
