import Foundation
import LoyaltyAPI

// The working set's sync: the directory, then the offers of only the retailers this device carries.

extension SyncEngine {
    /// How long a retailer that is no longer near, heard or followed stays in the cache.
    public static let workingSetRetention: Double = 7 * 86_400

    /// Refreshes the directory, fetches the working set (retailers with a store within the home area, those heard,
    /// those followed; every retailer when the directory has one bucket): new ones whole, heard ones by bucket,
    /// changed ones by delta and unchanged ones not at all; lets go of those not wanted for `workingSetRetention`.
    func syncWorkingSet(into report: inout SyncReport, progress: (SyncProgress) -> Void) throws(ClientError) {
        progress(.fetchingCatalog)
        // The directory is part of what the device holds: a new one is a change, even with no offer fetched.
        if try pullDirectory() { report.catalogChanged = true }
        try pullWorkingSet(area: try cache.homeArea, into: &report)
        progress(.storingOffers(stored: report.offersReceived))
        _ = try cache.evict(wantedBefore: now().addingTimeInterval(-Self.workingSetRetention))
    }

    /// Fetches at once the retailers whose UUID a scan heard and this device does not carry: each by its bucket, so
    /// the server learns one of the bucket's retailers, not which. What the scan runs on hearing one, online.
    public func fetchHeard() throws(ClientError) -> SyncReport {
        var report = SyncReport()
        if try cache.directoryRetailers().isEmpty { _ = try pullDirectory() }
        try fetchHeard(into: &report)
        return report
    }

    /// Whether the directory changed.
    private func pullDirectory() throws(ClientError) -> Bool {
        switch try api.directory(etag: try cache.directoryETag, credential) {
        case .notModified: return false
        case .directory(let directory, let etag):
            try cache.store(directory, etag: etag)
            return true
        }
    }

    private func pullWorkingSet(area: CatalogArea?, into report: inout SyncReport) throws(ClientError) {
        let heads = try directoryHeads()
        var wanted = Set(try cache.followed().map(\.id))
        if let area { wanted.formUnion(try cache.directoryRetailers(near: area)) }
        // One bucket: a heard UUID's fetch would bring every retailer anyway, so the device carries them all, for the
        // same bytes and privacy, and an offline scan has them (docs/SCALING.md). A new device fetches that bucket.
        let oneBucket = try cache.directoryBuckets == 1
        if oneBucket { wanted.formUnion(heads.keys) }
        try cache.want(wanted, at: now())
        if oneBucket, !heads.isEmpty, try cache.carried().allSatisfy({ heads[$0.key] == nil || $0.value.cursor == nil }) {
            try fetch(.bucket(0, of: 1), keeping: Set(heads.keys), since: nil, heads: heads, into: &report)
        }
        try fetchHeard(into: &report)
        let carried = try cache.carried().filter { heads[$0.key] != nil }
        // Never fetched: whole, by id.
        let fresh = carried.filter { $0.value.cursor == nil }.map(\.key)
        for chunk in Self.chunks(fresh) {
            try fetch(.retailers(chunk), keeping: Set(chunk), since: nil, heads: heads, into: &report)
        }
        // Changed since the copy (the directory's head is past it): their delta, one request per cursor they share.
        let changed = carried.filter { id, copy in copy.cursor != nil && heads[id]! > copy.head }
        for (cursor, group) in Dictionary(grouping: changed, by: { $0.value.cursor! }) {
            for chunk in Self.chunks(group.map(\.key)) {
                try fetch(.retailers(chunk), keeping: Set(chunk), since: cursor, heads: heads, into: &report)
            }
        }
    }

    private func fetchHeard(into report: inout SyncReport) throws(ClientError) {
        let carried = try cache.carried()
        let heard = try cache.heardRetailers().filter { carried[$0.id]?.cursor == nil }
        guard !heard.isEmpty else { return }
        try cache.want(Set(heard.map(\.id)), at: now())
        let buckets = try cache.directoryBuckets
        let heads = try directoryHeads()
        for (bucket, retailers) in Dictionary(grouping: heard, by: \.bucket) {
            // The bucket's other retailers come too and are dropped: the cache keeps what it heard.
            try fetch(
                .bucket(bucket, of: buckets), keeping: Set(retailers.map(\.id)), since: nil, heads: heads,
                into: &report)
        }
    }

    private func directoryHeads() throws(ClientError) -> [UUID: Int64] {
        Dictionary(try cache.directoryRetailers().map { ($0.id, $0.head) }) { first, _ in first }
    }

    /// Fetches a part's pages from `since` (nil: whole) and stores the rows of `keeping`; a 410 starts it over whole.
    private func fetch(
        _ part: LoyaltyAPIClient.CatalogPart, keeping retailers: Set<UUID>, since: String?, heads: [UUID: Int64],
        into report: inout SyncReport
    ) throws(ClientError) {
        var cursor = since
        var asked: Set<String> = since.map { [$0] } ?? []
        while true {
            let sentAt = now()
            switch try api.catalog(part, since: cursor, etag: nil, credential) {
            case .notModified: return
            case .cursorExpired:
                guard cursor != nil else {
                    throw .protocolViolation("the server refused a catalog request without a cursor as expired")
                }
                (cursor, asked) = (nil, [])
            case .page(let page, _):
                let offset = page.serverTime.timeIntervalSince(sentAt.addingTimeInterval(now().timeIntervalSince(sentAt) / 2))
                let stored = try cache.applyPart(page, retailers: retailers, heads: heads, serverTimeOffset: offset)
                report.offersReceived += stored.offers
                report.offersRemoved += stored.removed
                report.catalogPages += 1
                report.catalogChanged = true
                report.fullCatalog = report.fullCatalog || page.full
                guard page.more else { return }
                guard asked.insert(page.cursor).inserted else {
                    throw .protocolViolation(
                        "the server's catalog page names a page already read as the next (cursor \(page.cursor)): "
                            + "the sync stopped rather than ask for ever; try again later")
                }
                cursor = page.cursor
            }
        }
    }

    private static func chunks(_ ids: [UUID]) -> [[UUID]] {
        let sorted = ids.sorted { $0.uuidString < $1.uuidString }
        return stride(from: 0, to: sorted.count, by: 200).map { Array(sorted[$0..<min($0 + 200, sorted.count)]) }
    }
}
