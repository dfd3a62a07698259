import Dispatch
import Foundation
import JSONCoding
import LoyaltyAPI

/// Deletes the catalog's tombstones older than `retention` (`Database.purgeTombstones`) every `interval`
/// while the server runs, so a server that runs for months purges as one restarted daily does. The
/// cutoff comes from the store's clock. Instances purging at the same moment are harmless: one purges,
/// the others skip.
final class TombstonePurge: @unchecked Sendable {  // the timer is set up in init, then only cancelled (thread-safe)
    /// Tombstones are kept this long, so clients that sync at least this often never get a 410.
    static let retention: TimeInterval = 30 * 24 * 3600
    /// How often a running server purges them again (it also does at start).
    static let interval: TimeInterval = 6 * 3600

    private let queue = DispatchQueue(label: "loyalty-server.tombstone-purge")
    private let timer: any DispatchSourceTimer

    /// Starts the timer: the first purge after `interval` (the server purges once at start itself).
    init(database: Database, retention: TimeInterval, interval: TimeInterval, log: @escaping @Sendable (String) -> Void) {
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler {
            do {
                try Self.purge(database: database, retention: retention, log: log)
            } catch {
                // The next run tries again; the tombstones wait.
                log(ServerLog.line(.error, "tombstone_purge_failed", ["error": .string("\(error)")]))
            }
        }
        // Leeway lets the kernel batch wake-ups: 1% of the interval, at most a minute.
        let leeway = DispatchTimeInterval.milliseconds(Int(min(interval / 100, 60) * 1000))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: leeway)
        timer.resume()
    }

    /// Stops the timer and waits for a purge in progress, so the database can be stopped next.
    func stop() {
        timer.cancel()
        queue.sync {}
    }

    deinit { timer.cancel() }

    /// One purge now, logged (a `ServerLog` line) when it deleted something.
    static func purge(database: Database, retention: TimeInterval, log: @Sendable (String) -> Void) throws {
        let cutoff = database.clock().addingTimeInterval(-retention)
        let removed = try database.purgeTombstones(deletedBefore: cutoff)
        guard removed > 0 else { return }
        log(
            ServerLog.line(
                .info, "tombstones_purged",
                ["removed": .int(removed), "deleted_before": .string(LoyaltyJSON.formatTimestamp(cutoff))]))
    }
}
