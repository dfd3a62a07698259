import Foundation
import LoyaltyAPI

/// What a sync is doing, for a progress line on a terminal.
public enum SyncProgress: Sendable, Equatable {
    case pushingSeen(sent: Int)
    case fetchingCatalog
    case storingOffers(stored: Int, of: Int)
    case pullingSeen
}

/// What a sync did.
public struct SyncReport: Sendable, Equatable {
    /// Seen items the server acknowledged.
    public var pushed = 0
    /// Whether the catalog was fetched whole (first sync, `--full`, or the cursor expired).
    public var fullCatalog = false
    /// Whether the catalog had changed (false on 304).
    public var catalogChanged = false
    public var offersReceived = 0
    public var offersRemoved = 0
    /// Seen items of the account pulled from the server (this and other devices).
    public var seenPulled = 0
    public var cachedOffers = 0

    public init() {}
}

/// Push the outbox, pull the catalog delta, pull the account's seen set: in that order, each step
/// committed on its own, so an interrupted sync resumes where it stopped and never repeats a change.
public struct SyncEngine {
    public static let pushBatch = Validation.seenItemsPerPush.upperBound

    public let cache: OfferCache
    public let api: LoyaltyAPIClient
    public let credential: Credential
    /// The device clock, only to learn the server's offset from it.
    public let now: () -> Date

    public init(
        cache: OfferCache, api: LoyaltyAPIClient, credential: Credential, now: @escaping () -> Date
    ) {
        self.cache = cache
        self.api = api
        self.credential = credential
        self.now = now
    }

    /// With `full`, the catalog and seen set are fetched whole (the outbox is still pushed first). With
    /// `area`, the cache keeps only the part of the catalog around a point; a sync for another area (or
    /// for the whole catalog after an area) fetches a full page.
    public func sync(
        full: Bool = false, area: CatalogArea? = nil, progress: (SyncProgress) -> Void = { _ in }
    )
        throws(ClientError) -> SyncReport
    {
        var report = SyncReport()
        if full { try cache.forgetCursors() }
        report.pushed = try pushOutbox(progress: progress)
        try pullCatalog(into: &report, area: area, progress: progress)
        progress(.pullingSeen)
        report.seenPulled = try pullSeen()
        try cache.noteSyncFinished(at: now())
        report.cachedOffers = try cache.offerCount
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
        var cursor = sameArea ? try cache.catalogCursor : nil
        var sentAt = now()
        var answer = try api.catalog(
            since: cursor, etag: sameArea ? try cache.catalogETag : nil, area: area, credential)
        if case .cursorExpired = answer {
            cursor = nil
            sentAt = now()
            answer = try api.catalog(since: nil, etag: nil, area: area, credential)
        }
        switch answer {
        case .notModified:
            return
        case .cursorExpired:
            throw .protocolViolation("the server refused a catalog request without a cursor as expired")
        case .page(var page, let etag):
            let receivedAt = now()
            // Without a cursor the page is the whole catalog, whatever it says.
            page.full = page.full || cursor == nil
            let deviceMidpoint = sentAt.addingTimeInterval(receivedAt.timeIntervalSince(sentAt) / 2)
            try cache.apply(
                page, etag: etag, serverTimeOffset: page.serverTime.timeIntervalSince(deviceMidpoint),
                area: area,
                progress: { stored, total in progress(.storingOffers(stored: stored, of: total)) })
            report.fullCatalog = page.full
            report.catalogChanged = true
            report.offersReceived = page.offers.count
            report.offersRemoved = page.removed.count
        }
    }

    /// Pulls the seen set's pages until the server has nothing newer; an expired cursor (410) starts
    /// over from the beginning.
    private func pullSeen() throws(ClientError) -> Int {
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
