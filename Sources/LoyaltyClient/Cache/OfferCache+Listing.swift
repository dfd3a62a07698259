import Foundation
import SQLite

// `offers --json` lines, from the parts rendered when a page is applied.

extension OfferCache {
    /// Each cached offer as one JSON line (`offers --json`), in retailer id then beacon order, gathered into
    /// chunks of a little over `chunkBytes`: far fewer writes than one per line, and the memory for one chunk
    /// only. Keys, in order: id, major, minor, title, description, category, starts_at, ends_at, retailer,
    /// uuid, seen.
    ///
    /// A line is the offer's part and its retailer's, both rendered at sync, and `seen`, copied from where
    /// SQLite holds them into the chunk, so that a catalog of 100,000 offers lists fast. The scan goes
    /// retailer by retailer, so the retailer's part is read once, and the beacons its account has seen
    /// are walked beside the offers, both in beacon order.
    public func forEachOfferJSONChunk(
        retailerName: String? = nil, chunkBytes: Int = 1 << 16, _ body: ([UInt8]) -> Void
    ) throws(ClientError) {
        try read { db in
            let retailers = try db.query(
                "SELECT id, listing FROM retailers WHERE ?1 IS NULL OR name = ?1 COLLATE NOCASE ORDER BY id",
                [.optionalText(retailerName)])
            // From the seen set (small) to its offers, never the other way round (a probe per offer).
            var seenBeacons: [String: [Int64]] = [:]
            for row in try db.query(
                """
                SELECT o.retailer_id, o.major, o.minor FROM seen s CROSS JOIN offers o ON o.id = s.offer_id
                ORDER BY o.retailer_id, o.major, o.minor
                """)
            {
                seenBeacons[try row.text(0), default: []].append(Self.beaconKey(try row.integer(1), try row.integer(2)))
            }
            var chunk: [UInt8] = []
            chunk.reserveCapacity(chunkBytes + 1024)
            for retailer in retailers {
                let id = try retailer.text(0)
                let retailerPart = try retailer.text(1)
                let unseenEnd = Array((retailerPart + #","seen":false}"# + "\n").utf8)
                let seenEnd = Array((retailerPart + #","seen":true}"# + "\n").utf8)
                let seen = seenBeacons[id] ?? []
                var nextSeen = 0
                try db.forEachRowInPlace(
                    "SELECT major, minor, listing FROM offers WHERE retailer_id = ? ORDER BY major, minor", [.text(id)]
                ) { row in
                    let beacon = Self.beaconKey(row.integer(0), row.integer(1))
                    while nextSeen < seen.count && seen[nextSeen] < beacon { nextSeen += 1 }
                    chunk.append(contentsOf: row.text(2))
                    chunk.append(contentsOf: nextSeen < seen.count && seen[nextSeen] == beacon ? seenEnd : unseenEnd)
                    if chunk.count > chunkBytes {
                        body(chunk)
                        chunk.removeAll(keepingCapacity: true)
                    }
                }
            }
            if !chunk.isEmpty { body(chunk) }
        }
    }

    /// A beacon's (major, minor) as one integer, in the same order.
    private static func beaconKey(_ major: Int64, _ minor: Int64) -> Int64 { major << 16 | minor }
}
