import Digest
import Foundation
import LoyaltyAPI
import Postgres

// The directory of retailers every device holds, and the parts of the catalog (some retailers' rows) it fetches.

extension Database {
    /// Every retailer with its bucket, its head and its live stores' geofences, read in one snapshot at the feed's
    /// head. Retailers come in name order, stores in id order.
    func directory() throws -> RetailerDirectory {
        let now = clock()
        return try read { connection in
            let results = try connection.snapshot([
                "SELECT count(*) AS retailers FROM retailers",
                // A retailer's head: the latest version of itself, its offers and its stores (each the last entry
                // of an index of the retailer's rows in version order).
                """
                SELECT id, name, uuid, greatest(version,
                    (SELECT max(version) FROM offers WHERE retailer_id = retailers.id),
                    (SELECT max(version) FROM stores WHERE retailer_id = retailers.id)) AS head
                FROM retailers ORDER BY name, id
                """,
                "SELECT retailer_id, latitude, longitude, radius_m FROM stores WHERE deleted_at IS NULL ORDER BY id",
            ])
            let buckets = Self.bucketCount(retailers: try results[0][0].decode("retailers", as: Int.self))
            var stores: [UUID: [DirectoryStore]] = [:]
            for row in results[2] {
                stores[try row.decode("retailer_id"), default: []].append(
                    DirectoryStore(
                        latitude: try row.decode("latitude"), longitude: try row.decode("longitude"),
                        radiusMetres: try row.decode("radius_m")))
            }
            let retailers = try results[1].map { row throws -> DirectoryRetailer in
                let id: UUID = try row.decode("id")
                let uuid: UUID = try row.decode("uuid")
                return DirectoryRetailer(
                    id: id, name: try row.decode("name"), uuid: uuid, bucket: Self.bucket(of: uuid, among: buckets),
                    head: try row.decode("head"), stores: stores[id] ?? [])
            }
            return RetailerDirectory(buckets: buckets, serverTime: now, retailers: retailers)
        }
    }

    /// The latest version of any row of these retailers (0 for none): a part's head, which its ETag names.
    func partHead(_ ids: [UUID]) throws -> Int64 {
        let list = uuidArray(ids)
        return try read { connection in
            try connection.query(
                """
                SELECT greatest(0,
                    (SELECT max(version) FROM retailers WHERE id = ANY(\(list)::uuid[])),
                    (SELECT max(version) FROM offers WHERE retailer_id = ANY(\(list)::uuid[])),
                    (SELECT max(version) FROM stores WHERE retailer_id = ANY(\(list)::uuid[]))) AS head
                """)[0].decode("head")
        }
    }

    /// The retailers of bucket `bucket` among `buckets` (`retailer_bucket` in schema.sql), in id order.
    func retailers(inBucket bucket: Int, of buckets: Int) throws -> [UUID] {
        try read { connection in
            try connection.query(
                "SELECT id FROM retailers WHERE retailer_bucket(uuid, \(buckets)) = \(bucket) ORDER BY id"
            ).map { row throws(PostgresError) -> UUID in try row.decode("id") }
        }
    }

    /// About `retailersPerBucket` retailers a bucket, at least that many on average: a power of two, so that the
    /// buckets of one count split evenly into those of the next.
    static func bucketCount(retailers: Int) -> Int {
        var buckets = 1
        while buckets * 2 * retailersPerBucket <= retailers && buckets < maximumBuckets { buckets *= 2 }
        return buckets
    }

    /// A bucket hides which retailer a device heard among at least this many (on average; hashing spreads them
    /// unevenly) and costs the fetch their offers too: docs/SCALING.md weighs the two.
    static let retailersPerBucket = 16
    static let maximumBuckets = 1 << 16

    /// What `retailer_bucket` computes, for the directory's rows: the first 32 bits of the UUID's SHA-256, modulo
    /// the count.
    static func bucket(of uuid: UUID, among buckets: Int) -> Int {
        let digest = SHA256.hash(withUnsafeBytes(of: uuid.uuid) { Array($0) })
        let prefix = digest.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return Int(prefix % UInt32(buckets))
    }
}
