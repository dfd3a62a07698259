import Foundation
import LoyaltyAPI

/// What a sync is doing, for a progress line on a terminal.
public enum SyncProgress: Sendable, Equatable {
    case pushingSeen(sent: Int)
    case fetchingCatalog
    /// Offers stored so far from the catalog's pages.
    case storingOffers(stored: Int)
    case pullingSeen
}

/// What a sync did.
public struct SyncReport: Sendable, Equatable {
    /// Seen items the server acknowledged.
    public var pushed = 0
    /// Whether the catalog was fetched whole (first sync, `--full`, or the cursor expired); with a working set,
    /// whether a retailer or bucket was (one new to the device, or all with `--full`).
    public var fullCatalog = false
    /// How many catalog pages came.
    public var catalogPages = 0
    /// Whether the catalog had changed (false on 304).
    public var catalogChanged = false
    public var offersReceived = 0
    public var offersRemoved = 0
    /// Seen items of the account pulled from the server (this and other devices).
    public var seenPulled = 0
    /// This device's redemptions a till accepted since the last sync.
    public var codesAccepted = 0
    public var cachedOffers = 0
    /// The queued sightings of secure beacons this sync sent, and what became of them.
    public var sightings = SyncEngine.SightingsSent()
    /// With a working set: the retailers whose offers the cache carries (nil: it carries the whole catalog).
    public var carriedRetailers: Int?
    /// With a working set: the retailers of the directory, carried or not.
    public var directoryRetailers: Int?

    public init() {}
}

/// Push the outbox, pull the catalog delta, pull the account's seen set, note codes used at a till: in that order, each step
/// committed on its own, so an interrupted sync resumes where it stopped and never repeats a change.
public struct SyncEngine {
    public static let pushBatch = Validation.seenItemsPerPush.upperBound

    public let cache: OfferCache
    public let api: LoyaltyAPIClient
    public let credential: Credential
    /// The device clock, only to learn the server's offset from it.
    public let now: () -> Date
    /// The most rows per catalog page; nil leaves it to the server.
    public var catalogPageLimit: Int?

    public init(
        cache: OfferCache, api: LoyaltyAPIClient, credential: Credential, now: @escaping () -> Date
    ) {
        self.cache = cache
        self.api = api
        self.credential = credential
        self.now = now
    }

    /// With `full`, the catalog and seen set are fetched whole (the outbox is still pushed first). The cache carries
    /// its working set (`syncWorkingSet`), `area` becoming its home area, unless it carries the whole catalog
    /// (`OfferCache.stopWorkingSet`, `sync --all`): then with `area` it keeps only the part of the catalog around a
    /// point, and a sync for another area (or for the whole catalog after an area) fetches a full page.
    /// `showingVerifiedOffers`: the caller shows the presence offers of the visits the queued sightings verify
    /// (`loyalty sync`), so they are recorded as seen; a scan's own sync leaves them to the scan, which shows them
    /// when their beacon is near.
    public func sync(
        full: Bool = false, area: CatalogArea? = nil, showingVerifiedOffers: Bool = false,
        progress: (SyncProgress) -> Void = { _ in }
    )
        throws(ClientError) -> SyncReport
    {
        var report = SyncReport()
        let workingSet = try cache.carriesWorkingSet
        if workingSet { try cache.startWorkingSet(home: area) }
        if full {
            try cache.forgetCursors()
            if workingSet { try cache.forgetWorkingSetCursors() }
        }
        report.sightings = try sendSightings(recordingOffers: showingVerifiedOffers)
        report.pushed = try pushOutbox(progress: progress)
        if workingSet {
            try syncWorkingSet(into: &report, progress: progress)
        } else {
            try pullCatalog(into: &report, area: area, progress: progress)
        }
        progress(.pullingSeen)
        report.seenPulled = try pullSeen()
        report.codesAccepted = try pullAcceptances()
        // The account's quiet hours, caps and muted retailers, as another device may have changed them.
        try cache.setPreferences(try api.preferences(credential))
        try cache.noteSyncFinished(at: now())
        report.cachedOffers = try cache.offerCount
        if workingSet {
            report.carriedRetailers = try cache.carried().count
            report.directoryRetailers = try cache.directoryRetailers().count
        }
        return report
    }

    /// Sends unacknowledged seen items oldest first; each acknowledged batch leaves the outbox.
    public func pushOutbox(progress: (SyncProgress) -> Void = { _ in }) throws(ClientError) -> Int {
        var sent = 0
        while true {
            let (items, through) = try cache.outbox(limit: Self.pushBatch)
            guard !items.isEmpty else { return sent }
            _ = try api.pushSeen(items, credential)
            try cache.acknowledgeOutbox(through: through)
            sent += items.count
            progress(.pushingSeen(sent: sent))
        }
    }

    private func pullCatalog(
        into report: inout SyncReport, area: CatalogArea?, progress: (SyncProgress) -> Void
    )
        throws(ClientError)
    {
        progress(.fetchingCatalog)
        // A cursor and ETag describe the copy the cache holds: only good for the same area.
        let sameArea = try cache.catalogArea == area
        let cursor = sameArea ? try cache.catalogCursor : nil
        let pulled = try pullPages(
            since: cursor, etag: sameArea ? try cache.catalogETag : nil, area: area, into: &report,
            progress: progress)
        if !pulled {
            // 410: the server can no longer continue from the cursor; take the whole catalog again.
            guard cursor != nil || report.catalogPages > 0 else {
                throw .protocolViolation("the server refused a catalog request without a cursor as expired")
            }
            var fresh = SyncReport()
            fresh.pushed = report.pushed
            fresh.sightings = report.sightings
            report = fresh
            guard try pullPages(since: nil, etag: nil, area: area, into: &report, progress: progress) else {
                throw .protocolViolation("the server refused a catalog request without a cursor as expired")
            }
        }
    }

    /// Stores the catalog's pages from `since` on, each in its own transaction with its cursor, while
    /// the next one downloads; false on 410.
    private func pullPages(
        since: String?, etag: String?, area: CatalogArea?, into report: inout SyncReport,
        progress: (SyncProgress) -> Void
    ) throws(ClientError) -> Bool {
        let sentAt = now()
        let download = CatalogDownload(
            like: api, since: since, etag: etag, area: area,
            limit: catalogPageLimit, credential)
        defer { download.close() }
        var cursor = since
        // Each page must bring the client further: a cursor named twice (a page naming itself as the next, or an
        // earlier one) would have the sync ask for ever.
        var askedCursors: Set<String> = since.map { [$0] } ?? []
        var serverTimeOffset: Double?
        while let answer = try download.next() {
            guard answer.since == cursor else {
                throw .protocolViolation("the server's next catalog page does not follow the page before")
            }
            switch answer.response.status {
            case 304: return true
            case 410: return false
            default: break
            }
            // The page's own fields first, then its rows, stored as they are read from its file: a page is never
            // held whole, so a sync costs a few MiB whatever a server sends.
            let page = try answer.body.withBytes { bytes, release throws(ClientError) in
                var page = try api.readPage(bytes, rows: { _ in true }, progress: release)
                // Learned from the first page, the one this thread waited for.
                let offset =
                    serverTimeOffset
                    ?? page.serverTime.timeIntervalSince(sentAt.addingTimeInterval(now().timeIntervalSince(sentAt) / 2))
                serverTimeOffset = offset
                // Without a cursor the page is the whole catalog, whatever it says.
                page.full = page.full || cursor == nil
                let stored = try cache.apply(
                    page, etag: answer.response.header("ETag"), serverTimeOffset: offset, area: area
                ) { store in
                    var failure: (any Error)?
                    do {
                        _ = try api.readPage(
                            bytes,
                            rows: { row in
                                do { try store(row) } catch { failure = error }
                                return failure == nil
                            }, progress: release)
                    } catch {
                        throw failure ?? error
                    }
                }
                report.offersReceived += stored.offers
                report.offersRemoved += stored.removed
                return page
            }
            report.fullCatalog = report.fullCatalog || page.full
            report.catalogChanged = true
            report.catalogPages += 1
            progress(.storingOffers(stored: report.offersReceived))
            guard page.more else { return true }
            guard askedCursors.insert(page.cursor).inserted else {
                throw .protocolViolation(
                    "the server's catalog page names a page already read as the next (cursor \(page.cursor)): "
                        + "the sync stopped rather than ask for ever; try again later")
            }
            cursor = page.cursor
        }
        throw .protocolViolation("the server's catalog page says more follows, but names no next page")
    }

    /// Pulls the seen set's pages until the server has nothing newer; an expired cursor (410) starts
    /// over from the beginning.
    func pullSeen() throws(ClientError) -> Int {
        var pulled = 0
        var cursor = try cache.seenCursor
        while true {
            let page: SeenPage
            do {
                page = try api.seen(since: cursor, credential)
            } catch .server(410, _, _) where cursor != nil {
                // The server cannot continue from this cursor: take the whole set again (a union).
                cursor = nil
                continue
            }
            try cache.apply(page)
            pulled += page.items.count
            if page.items.isEmpty || page.cursor == cursor { return pulled }
            cursor = page.cursor
        }
    }
}
