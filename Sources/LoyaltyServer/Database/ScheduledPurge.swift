import Dispatch
import Foundation
import JSONCoding
import LoyaltyAPI

/// Every `interval` while the server runs: deletes the catalog's tombstones older than `tombstoneRetention`
/// (`Database.purgeTombstones`), and the seen records, verified sightings and expired link codes older than
/// `shopperDataRetention` (`Database.purgeShopperData`, in bounded batches), so a server that runs for months
/// purges as one restarted daily does. The cutoffs come from the store's clock. Instances purging at the same
/// moment are harmless: they take turns (advisory locks).
final class ScheduledPurge: @unchecked Sendable {  // the timer is set up in init, then only cancelled (thread-safe)
    /// Tombstones are kept this long, so clients that sync at least this often never get a 410.
    static let tombstoneRetention: TimeInterval = 30 * 24 * 3600
    /// How often a running server purges again (it also does at start).
    static let interval: TimeInterval = 6 * 3600

    private let queue = DispatchQueue(label: "loyalty-server.scheduled-purge")
    private let timer: any DispatchSourceTimer

    /// Starts the timer: the first purge after `interval` (the server purges once at start itself).
    init(
        database: Database, shopperDataRetention: TimeInterval, interval: TimeInterval,
        log: @escaping @Sendable (String) -> Void
    ) {
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler {
            do {
                try Self.purge(database: database, shopperDataRetention: shopperDataRetention, log: log)
            } catch {
                // The next run tries again; the rows wait.
                log(ServerLog.line(.error, "purge_failed", ["error": .string("\(error)")]))
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

    /// One purge of each kind now, each logged (a `ServerLog` line) when it deleted something.
    static func purge(database: Database, shopperDataRetention: TimeInterval, log: @Sendable (String) -> Void) throws {
        let now = database.clock()
        let tombstoneCutoff = now.addingTimeInterval(-tombstoneRetention)
        let removed = try database.purgeTombstones(deletedBefore: tombstoneCutoff)
        if removed > 0 {
            log(
                ServerLog.line(
                    .info, "tombstones_purged",
                    ["removed": .int(removed), "deleted_before": .string(LoyaltyJSON.formatTimestamp(tombstoneCutoff))]))
        }
        let shopperCutoff = now.addingTimeInterval(-shopperDataRetention)
        let purged = try database.purgeShopperData(before: shopperCutoff)
        if purged.seen + purged.sightings + purged.linkCodes > 0 {
            log(
                ServerLog.line(
                    .info, "shopper_data_purged",
                    ["seen": .int(purged.seen), "verified_sightings": .int(purged.sightings),
                     "link_codes": .int(purged.linkCodes),
                     "older_than": .string(LoyaltyJSON.formatTimestamp(shopperCutoff))]))
        }
    }
}
