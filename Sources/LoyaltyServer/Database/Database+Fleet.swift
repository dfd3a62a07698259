import Foundation
import LoyaltyAPI
import Postgres

/// The beacon fleet: every (major, minor) of a retailer that has a live offer, a name, or was heard by shoppers
/// while an offer since removed was on it; with the names the retailer gave them and what shoppers heard.
extension Database {
    /// Up to `limit` beacons after `after`, by major then minor, each with only the days it was heard: one page
    /// holds at most `limit` x `days` day entries, whatever the fleet's size.
    func fleet(
        retailerID: UUID, days: Int, quietDays: Int, after: (major: UInt16, minor: UInt16)?, limit: Int
    ) throws -> BeaconFleet {
        let now = clock()
        let today = Int64((now.timeIntervalSince1970 / 86_400).rounded(.down))
        let firstDay = today - Int64(days) + 1
        let from = Date(timeIntervalSince1970: Double(firstDay) * 86_400)
        let quietSince = now.addingTimeInterval(-Double(quietDays) * 86_400)
        let start = after.map { Int($0.major) << 16 | Int($0.minor) } ?? -1
        let (afterMajor, afterMinor) = (start >> 16, start & 0xFFFF)
        let (beaconRows, dayRows) = try pool.withConnection { connection -> (PostgresResult, PostgresResult?) in
            // Offers are a reference table and seen is distributed: seen is read for the retailer's offers
            // (removed ones too: a beacon heard then is still a beacon) and grouped by beacon. Every part starts
            // after the page's `after`, so a page reads what follows it, not the whole fleet.
            // A secure beacon is heard only by verified sightings: a seen push on it claims, and does not count.
            let beacons = try connection.query(
                """
                WITH mine AS (
                    SELECT id, major, minor, title, category, updated_at, deleted_at FROM offers
                    WHERE retailer_id = \(retailerID) AND (major, minor) > (\(afterMajor)::int, \(afterMinor)::int)),
                secure AS (
                    SELECT major, minor FROM secure_beacons WHERE retailer_id = \(retailerID)
                        AND (major, minor) > (\(afterMajor)::int, \(afterMinor)::int)),
                heard AS (
                    SELECT major, minor, max(at) AS last_heard_at FROM (
                        SELECT mine.major, mine.minor, seen.seen_at AS at FROM seen JOIN mine ON mine.id = seen.offer_id
                        WHERE (mine.major, mine.minor) NOT IN (SELECT major, minor FROM secure)
                        UNION ALL SELECT mine.major, mine.minor, f.last_seen_at
                        FROM seen_folds f JOIN mine ON mine.id = f.offer_id
                        WHERE (mine.major, mine.minor) NOT IN (SELECT major, minor FROM secure)
                        UNION ALL SELECT v.major, v.minor, v.heard_at FROM verified_sightings v
                        WHERE v.retailer_id = \(retailerID) AND (v.major, v.minor) IN (SELECT major, minor FROM secure)
                    ) AS heard_at
                    GROUP BY major, minor),
                fleet AS (
                    SELECT major, minor FROM mine WHERE deleted_at IS NULL
                    UNION SELECT major, minor FROM heard
                    UNION SELECT major, minor FROM secure
                    UNION SELECT major, minor FROM beacons WHERE retailer_id = \(retailerID)
                        AND (major, minor) > (\(afterMajor)::int, \(afterMinor)::int)
                    ORDER BY major, minor LIMIT \(limit + 1))
                SELECT fleet.major, fleet.minor, b.name, b.placement, b.store_id, b.updated_at AS named_at,
                    live.id AS offer_id, live.title, live.category, live.updated_at AS offer_updated_at,
                    heard.last_heard_at, secure.major IS NOT NULL AS secure, t.battery_mv, t.temperature,
                    t.advertising_count, t.uptime_seconds, t.heard_at AS telemetry_heard_at
                FROM fleet
                    LEFT JOIN beacons b ON b.retailer_id = \(retailerID) AND b.major = fleet.major
                        AND b.minor = fleet.minor
                    LEFT JOIN mine live ON live.deleted_at IS NULL AND live.major = fleet.major
                        AND live.minor = fleet.minor
                    LEFT JOIN heard ON heard.major = fleet.major AND heard.minor = fleet.minor
                    LEFT JOIN secure ON secure.major = fleet.major AND secure.minor = fleet.minor
                    LEFT JOIN beacon_telemetry t ON secure.major IS NOT NULL AND t.retailer_id = \(retailerID)
                        AND t.major = fleet.major AND t.minor = fleet.minor
                ORDER BY fleet.major, fleet.minor
                """
            )
            let lastRow = beacons.count > limit ? limit - 1 : beacons.count - 1
            guard lastRow >= 0 else { return (beacons, nil) }
            let last = Int(try beacons[lastRow].decode("major", as: Int.self)) << 16
                | (try beacons[lastRow].decode("minor", as: Int.self))
            // Only the page's beacons, and only the days they were heard (the seen records folded by the retention
            // purge or an account's deletion included, by their day; a secure beacon: by accounts that verified).
            let days = try connection.query(
                """
                WITH page AS (
                    SELECT id, major, minor FROM offers
                    WHERE retailer_id = \(retailerID) AND (major, minor) > (\(afterMajor)::int, \(afterMinor)::int)
                        AND (major, minor) <= (\(last >> 16)::int, \(last & 0xFFFF)::int)),
                secure AS (
                    SELECT major, minor FROM secure_beacons WHERE retailer_id = \(retailerID)
                        AND (major, minor) > (\(afterMajor)::int, \(afterMinor)::int)
                        AND (major, minor) <= (\(last >> 16)::int, \(last & 0xFFFF)::int)),
                plain AS (SELECT * FROM page WHERE (major, minor) NOT IN (SELECT major, minor FROM secure))
                SELECT major, minor, day, sum(sightings)::bigint AS sightings FROM (
                    SELECT plain.major, plain.minor, floor(extract(epoch FROM s.seen_at) / 86400)::bigint AS day,
                        count(*) AS sightings
                    FROM seen s JOIN plain ON plain.id = s.offer_id
                    WHERE s.seen_at >= \(from) AND s.seen_at <= \(now)
                    GROUP BY plain.major, plain.minor, day
                    UNION ALL
                    SELECT plain.major, plain.minor, f.day, f.shown FROM seen_folds f JOIN plain ON plain.id = f.offer_id
                    WHERE f.day BETWEEN floor(extract(epoch FROM \(from)::timestamptz) / 86400)::bigint
                        AND floor(extract(epoch FROM \(now)::timestamptz) / 86400)::bigint
                    UNION ALL
                    SELECT v.major, v.minor, floor(extract(epoch FROM v.heard_at) / 86400)::bigint AS day,
                        count(DISTINCT v.account_id)
                    FROM verified_sightings v
                    WHERE v.retailer_id = \(retailerID) AND v.heard_at >= \(from) AND v.heard_at <= \(now)
                        AND (v.major, v.minor) IN (SELECT major, minor FROM secure)
                    GROUP BY v.major, v.minor, day) AS parts
                GROUP BY major, minor, day
                ORDER BY major, minor, day
                """
            )
            return (beacons, days)
        }
        var counts: [Int: [BeaconDay]] = [:]
        for row in dayRows.map(Array.init) ?? [] {
            let key = Int(try row.decode("major", as: Int.self)) << 16 | (try row.decode("minor", as: Int.self))
            counts[key, default: []].append(
                BeaconDay(date: Self.dayText(try row.decode("day")), sightings: try row.decode("sightings")))
        }
        let beacons = try beaconRows.prefix(limit).map { row throws(PostgresError) in
            let major: Int = try row.decode("major")
            let minor: Int = try row.decode("minor")
            let offerID = try row.decode("offer_id", as: UUID?.self)
            let lastHeard = try row.decode("last_heard_at", as: Date?.self)
            let offerUpdated = try row.decode("offer_updated_at", as: Date?.self)
            let named = try row.decode("named_at", as: Date?.self)
            let quiet = (lastHeard ?? offerUpdated ?? named ?? now) < quietSince
            let telemetry = try row.decode("telemetry_heard_at", as: Date?.self).map { heardAt throws(PostgresError) in
                BeaconTelemetry(
                    batteryMillivolts: try row.decode("battery_mv", as: Int?.self),
                    temperature: try row.decode("temperature", as: Double?.self),
                    advertisingCount: try row.decode("advertising_count", as: Int64?.self),
                    uptimeSeconds: try row.decode("uptime_seconds", as: Double?.self), heardAt: heardAt)
            }
            return FleetBeacon(
                major: UInt16(major), minor: UInt16(minor), name: try row.decode("name", as: String?.self),
                placement: (try row.decode("placement", as: String?.self)).flatMap { $0.isEmpty ? nil : $0 },
                storeID: try row.decode("store_id", as: String?.self), secure: try row.decode("secure"),
                telemetry: telemetry,
                offerID: offerID, title: try row.decode("title", as: String?.self),
                category: try row.decode("category", as: String?.self), lastHeardAt: lastHeard,
                sightings: counts[major << 16 | minor] ?? [],
                quiet: quiet,
                note: telemetry.flatMap { $0.lowBattery ? $0.batteryMillivolts : nil }.map {
                    "battery low (\($0) mV, under \(BeaconTelemetry.lowBatteryMillivolts)): change it soon"
                } ?? Self.fleetNote(
                    hasOffer: offerID != nil, lastHeard: lastHeard, quiet: quiet, quietDays: quietDays))
        }
        let next = beaconRows.count > limit ? beacons.last.map { "\($0.major).\($0.minor)" } : nil
        return BeaconFleet(
            days: days, firstDay: Self.dayText(firstDay), quietDays: quietDays, beacons: beacons, next: next)
    }

    /// What a flag means and what to check, in the retailer's words.
    private static func fleetNote(hasOffer: Bool, lastHeard: Date?, quiet: Bool, quietDays: Int) -> String? {
        switch (hasOffer, lastHeard, quiet) {
        case (true, nil, true):
            "never heard by a shopper in the \(quietDays) days since its offer was set: check that it is switched "
                + "on and advertises your UUID with this major and minor"
        case (_, .some, true):
            "unheard for more than \(quietDays) days: check its battery, and that it was not moved or covered"
        case (false, .some, false):
            "heard by shoppers but has no offer: they pass it and are shown nothing"
        case (false, nil, true):
            "no offer and never heard"
        default:
            nil
        }
    }

    /// Names a beacon (creates or replaces its label); `created` tells which. A store it is placed in must be one of
    /// the retailer's live stores.
    func labelBeacon(retailerID: UUID, major: UInt16, minor: UInt16, label: BeaconLabel) throws -> Bool {
        try pool.withConnection { connection in
            if let storeID = label.storeID,
                try connection.query(
                    """
                    SELECT 1 FROM stores WHERE retailer_id = \(retailerID) AND store_id = \(storeID)
                        AND deleted_at IS NULL
                    """
                ).isEmpty
            {
                throw ValidationError(
                    field: "store_id", message: "is no store of yours: add it first (loyalty retailer store set)")
            }
            return try connection.query(
                """
                INSERT INTO beacons (retailer_id, major, minor, name, placement, store_id, updated_at)
                VALUES (\(retailerID), \(Int(major)), \(Int(minor)), \(label.name), \(label.placement ?? ""),
                    \(label.storeID), \(clock()))
                ON CONFLICT (retailer_id, major, minor) DO UPDATE SET
                    name = excluded.name, placement = excluded.placement, store_id = excluded.store_id,
                    updated_at = excluded.updated_at
                RETURNING (xmax = 0) AS created
                """
            )[0].decode("created")
        }
    }
}
