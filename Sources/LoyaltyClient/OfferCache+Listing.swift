import Foundation
import SQLite

// `offers --json` lines, built in SQL from the parts rendered when a page is applied.

extension OfferCache {
    /// Each cached offer as one JSON object (`offers --json`), rendered at sync but for `seen`, so that
    /// a catalog of 100,000 offers lists fast. Keys, in order: id, major, minor, title, description,
    /// category, starts_at, ends_at, retailer, uuid, seen.
    public func forEachOfferJSON(retailerName: String? = nil, _ body: (String) -> Void)
        throws(ClientError)
    {
        let sql = """
            SELECT o.listing || r.listing
                || CASE WHEN EXISTS (SELECT 1 FROM seen s WHERE s.offer_id = o.id) THEN ',"seen":true}'
                   ELSE ',"seen":false}' END
            FROM offers o JOIN retailers r ON r.id = o.retailer_id
            \(retailerName == nil ? "" : "WHERE r.name = ? COLLATE NOCASE")
            ORDER BY o.retailer_id, o.major, o.minor
            """
        try read { db in
            try db.forEachRow(sql, retailerName.map { [.text($0)] } ?? []) { row in
                if let line = row[0].text { body(line) }
            }
        }
    }

    /// `forEachOfferJSON`'s lines, each ending in a newline, gathered into chunks of a little over
    /// `chunkBytes`: far fewer writes than one per line, and the memory for one chunk only.
    public func forEachOfferJSONChunk(
        retailerName: String? = nil, chunkBytes: Int = 1 << 16, _ body: (String) -> Void
    ) throws(ClientError) {
        var chunk = ""
        try forEachOfferJSON(retailerName: retailerName) { line in
            chunk += line
            chunk += "\n"
            if chunk.utf8.count > chunkBytes {
                body(chunk)
                chunk = ""
            }
        }
        if !chunk.isEmpty { body(chunk) }
    }
}
