import Foundation
import LoyaltyAPI
import SQLite

// The queue of secure-beacon sightings a scan could not send: sent by the next sync, or by the scan once the
// service answers again.

extension OfferCache {
    /// The most sightings the queue holds: a day offline near a crowd of rotating beacons keeps the newest.
    public static let sightingQueueLimit = 1000

    /// A queued sighting and its place in the queue, to remove it by once the service answered it.
    public struct QueuedSighting: Sendable, Equatable {
        public var id: Int64
        public var sighting: Sighting
    }

    /// Queues `sightings`, keeping the newest `sightingQueueLimit`; returns how many older ones that dropped.
    @discardableResult
    public func queueSightings(_ sightings: [Sighting]) throws(ClientError) -> Int {
        guard !sightings.isEmpty else { return 0 }
        return try write { db in
            for sighting in sightings {
                try db.run(
                    "INSERT INTO sightings (eid, uuid, major, minor, heard_at, rssi) VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        .optionalText(sighting.eid), .optionalText(sighting.uuid?.uuidString),
                        .optionalInteger(sighting.major.map(Int.init)), .optionalInteger(sighting.minor.map(Int.init)),
                        .real(sighting.heardAt.timeIntervalSince1970), .optionalInteger(sighting.rssi),
                    ])
            }
            let count = try db.query("SELECT count(*) FROM sightings").first?.integer(0) ?? 0
            let excess = Int(count) - Self.sightingQueueLimit
            guard excess > 0 else { return 0 }
            try db.run(
                "DELETE FROM sightings WHERE id IN (SELECT id FROM sightings ORDER BY heard_at, id LIMIT ?)",
                [.integer(Int64(excess))])
            return excess
        }
    }

    /// Drops the queued sightings heard before `heardBefore` (older than the service accepts); returns how many.
    public func dropSightings(heardBefore: Date) throws(ClientError) -> Int {
        try write { db in
            let stale = try db.query(
                "SELECT count(*) FROM sightings WHERE heard_at < ?", [.real(heardBefore.timeIntervalSince1970)]
            ).first?.integer(0) ?? 0
            if stale > 0 {
                try db.run("DELETE FROM sightings WHERE heard_at < ?", [.real(heardBefore.timeIntervalSince1970)])
            }
            return Int(stale)
        }
    }

    /// The oldest queued sightings, up to `limit`.
    public func queuedSightings(limit: Int) throws(ClientError) -> [QueuedSighting] {
        try read { db in
            try db.query(
                "SELECT id, eid, uuid, major, minor, heard_at, rssi FROM sightings ORDER BY id LIMIT ?",
                [.integer(Int64(limit))]
            ).map { row in
                let heardAt = Date(timeIntervalSince1970: try row.real(5))
                let rssi = row.optionalInteger(6).map(Int.init)
                if let eid = row.optionalText(1) {
                    return QueuedSighting(id: try row.integer(0), sighting: Sighting(eid: eid, heardAt: heardAt, rssi: rssi))
                }
                return QueuedSighting(
                    id: try row.integer(0),
                    sighting: Sighting(
                        uuid: try row.uuid(2), major: UInt16(clamping: try row.integer(3)),
                        minor: UInt16(clamping: try row.integer(4)), heardAt: heardAt, rssi: rssi))
            }
        }
    }

    /// The service answered these queued sightings (resolved or not): they leave the queue.
    public func removeQueuedSightings(_ ids: [Int64]) throws(ClientError) {
        guard !ids.isEmpty else { return }
        try write { db in
            for id in ids { try db.run("DELETE FROM sightings WHERE id = ?", [.integer(id)]) }
        }
    }

    public var queuedSightingCount: Int {
        get throws(ClientError) {
            try read { db in Int(try db.query("SELECT count(*) FROM sightings").first?.integer(0) ?? 0) }
        }
    }
}
