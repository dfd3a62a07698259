import Foundation
import JSONCoding
import LoyaltyAPI
import Postgres

/// Figures over time and beacon health, read from the seen set and the redemptions of the retailer's live
/// offers (shopper tables, each read for those offers on its own, as `statistics` does), and from the folds of the
/// seen records purged or deleted with their account (`foldAndDeleteSeen`).
extension Database {
    func figures(retailerID: UUID, days: Int) throws -> RetailerFigures {
        let now = clock()
        let today = Int64((now.timeIntervalSince1970 / 86_400).rounded(.down))
        let firstDay = today - Int64(days) + 1
        let from = Date(timeIntervalSince1970: Double(firstDay) * 86_400)
        let rows = try pool.withConnection { connection in
            try connection.query(
                """
                WITH live AS (
                    SELECT id FROM offers WHERE retailer_id = \(retailerID) AND deleted_at IS NULL),
                events AS (
                    SELECT offer_id, account_id, seen_at AS at, 0 AS kind FROM seen
                    WHERE offer_id IN (SELECT id FROM live) AND seen_at >= \(from) AND seen_at <= \(now)
                    UNION ALL
                    SELECT offer_id, account_id, created_at, 1 FROM redemptions
                    WHERE offer_id IN (SELECT id FROM live) AND created_at >= \(from) AND created_at <= \(now)
                    UNION ALL
                    SELECT offer_id, account_id, accepted_at, 2 FROM redemptions
                    WHERE offer_id IN (SELECT id FROM live) AND accepted_at >= \(from) AND accepted_at <= \(now)),
                counted AS (
                    SELECT offer_id, day, count(*) FILTER (WHERE kind = 0) AS shown,
                        count(DISTINCT account_id) FILTER (WHERE kind < 2) AS shoppers,
                        count(*) FILTER (WHERE kind = 1) AS redeemed, count(*) FILTER (WHERE kind = 2) AS accepted
                    FROM (SELECT *, floor(extract(epoch FROM at) / 86400)::bigint AS day FROM events) AS dated
                    GROUP BY GROUPING SETS ((offer_id, day), (day))),
                folded AS (
                    SELECT offer_id, day, shown, shoppers FROM seen_folds
                    WHERE offer_id IN (SELECT id FROM live) AND day BETWEEN \(firstDay) AND \(today)),
                summed AS (
                    SELECT offer_id, day, sum(shown)::bigint AS shown, sum(shoppers)::bigint AS shoppers,
                        sum(redeemed)::bigint AS redeemed, sum(accepted)::bigint AS accepted
                    FROM (
                        SELECT offer_id, day, shown, shoppers, redeemed, accepted FROM counted
                        UNION ALL SELECT offer_id, day, shown, shoppers, 0, 0 FROM folded
                        UNION ALL SELECT NULL, day, shown, 0, 0, 0 FROM folded
                        UNION ALL SELECT NULL, day, 0, shoppers, 0, 0 FROM seen_day_folds
                        WHERE retailer_id = \(retailerID) AND day BETWEEN \(firstDay) AND \(today)) AS parts
                    GROUP BY offer_id, day)
                SELECT summed.*, o.major, o.minor, o.title
                FROM summed LEFT JOIN offers o ON o.id = summed.offer_id
                ORDER BY o.major NULLS FIRST, o.minor, summed.day
                """
            )
        }
        func emptyDays() -> [DayFigures] {
            (firstDay...today).map { DayFigures(date: Self.dayText($0), shown: 0, uniqueShoppers: 0, redeemed: 0, accepted: 0) }
        }
        var total = emptyDays()
        var offers: [OfferFigures] = []
        for row in rows {
            let index = Int(try row.decode("day", as: Int64.self) - firstDay)
            guard total.indices.contains(index) else { continue }
            let figures = DayFigures(
                date: Self.dayText(firstDay + Int64(index)), shown: try row.decode("shown"),
                uniqueShoppers: try row.decode("shoppers"), redeemed: try row.decode("redeemed"),
                accepted: try row.decode("accepted"))
            guard let offerID = try row.decode("offer_id", as: UUID?.self) else {
                total[index] = figures
                continue
            }
            if offers.last?.offerID != offerID {
                offers.append(
                    OfferFigures(
                        offerID: offerID, major: try row.decode("major"), minor: try row.decode("minor"),
                        title: try row.decode("title"), days: emptyDays()))
            }
            offers[offers.count - 1].days[index] = figures
        }
        return RetailerFigures(days: days, total: total, offers: offers)
    }

    /// Every live offer's beacon with when it was last heard (an index probe of `seen_offer_seen_at` each),
    /// the longest unheard first.
    func beaconHealth(retailerID: UUID, quietDays: Int) throws -> BeaconHealthList {
        let quietSince = clock().addingTimeInterval(-Double(quietDays) * 86_400)
        let rows = try pool.withConnection { connection in
            try connection.query(
                """
                SELECT o.id, o.major, o.minor, o.title, heard.last_heard_at,
                    coalesce(heard.last_heard_at, o.updated_at) < \(quietSince) AS check_battery
                FROM offers o
                    LEFT JOIN LATERAL (
                        SELECT greatest(
                            (SELECT max(seen_at) FROM seen WHERE offer_id = o.id),
                            (SELECT max(last_seen_at) FROM seen_folds WHERE offer_id = o.id)) AS last_heard_at
                    ) heard ON true
                WHERE o.retailer_id = \(retailerID) AND o.deleted_at IS NULL
                ORDER BY heard.last_heard_at NULLS FIRST, o.major, o.minor
                """
            )
        }
        return BeaconHealthList(
            quietDays: quietDays,
            beacons: try rows.map { row throws(PostgresError) in
                BeaconHealth(
                    offerID: try row.decode("id"), major: try row.decode("major"), minor: try row.decode("minor"),
                    title: try row.decode("title"), lastHeardAt: try row.decode("last_heard_at", as: Date?.self),
                    checkBattery: try row.decode("check_battery"))
            })
    }

    /// `2026-12-01` for a count of days since 1970-01-01.
    static func dayText(_ days: Int64) -> String {
        String(LoyaltyJSON.formatTimestamp(Date(timeIntervalSince1970: Double(days) * 86_400)).prefix(10))
    }
}
