import Foundation
import Geofencing
import LoyaltyAPI
import Postgres

/// Where verified sightings put an account: the store a secure beacon is placed in (`beacons.store_id`).
extension Database {
    /// The location of each beacon's store, by "RETAILER MAJOR MINOR" (lowercase retailer id); a beacon placed in
    /// no live store is absent.
    func storeLocations(of beacons: [SecureBeacon]) throws -> [String: GeoCoordinate] {
        guard !beacons.isEmpty else { return [:] }
        let rows = try pool.withConnection { connection in
            try connection.query(
                """
                SELECT b.retailer_id, b.major, b.minor, s.latitude, s.longitude
                FROM unnest(\(uuidArray(beacons.map(\.retailerID)))::uuid[],
                        \(textArray(beacons.map { String($0.major) }))::integer[],
                        \(textArray(beacons.map { String($0.minor) }))::integer[]) AS q (retailer_id, major, minor)
                    JOIN beacons b ON b.retailer_id = q.retailer_id AND b.major = q.major AND b.minor = q.minor
                    JOIN stores s ON s.retailer_id = b.retailer_id AND s.store_id = b.store_id
                        AND s.deleted_at IS NULL
                """
            )
        }
        var locations: [String: GeoCoordinate] = [:]
        for row in rows {
            let key = Self.placementKey(
                try row.decode("retailer_id"), UInt16(try row.decode("major", as: Int.self)),
                UInt16(try row.decode("minor", as: Int.self)))
            locations[key] = GeoCoordinate(latitude: try row.decode("latitude"), longitude: try row.decode("longitude"))
        }
        return locations
    }

    /// The account's latest verified sighting at a beacon placed in a live store: where its next journey starts.
    func latestPlacedVisit(accountID: UUID) throws -> JourneyRule.Visit? {
        try pool.withConnection { connection in
            try connection.query(
                """
                SELECT v.heard_at, s.latitude, s.longitude
                FROM verified_sightings v
                    JOIN beacons b ON b.retailer_id = v.retailer_id AND b.major = v.major AND b.minor = v.minor
                    JOIN stores s ON s.retailer_id = b.retailer_id AND s.store_id = b.store_id
                        AND s.deleted_at IS NULL
                WHERE v.account_id = \(accountID)
                ORDER BY v.heard_at DESC LIMIT 1
                """
            ).first.map { row throws(PostgresError) in
                JourneyRule.Visit(
                    location: GeoCoordinate(
                        latitude: try row.decode("latitude"), longitude: try row.decode("longitude")),
                    heardAt: try row.decode("heard_at"))
            }
        }
    }

    static func placementKey(_ retailerID: UUID, _ major: UInt16, _ minor: UInt16) -> String {
        "\(retailerID.uuidString.lowercased()) \(major) \(minor)"
    }
}
