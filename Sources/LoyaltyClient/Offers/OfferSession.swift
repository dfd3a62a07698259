import Beacons
import Foundation
import LoyaltyAPI

/// The offers side of `loyalty scan`: regions to monitor, beacon resolution, the presenter, recording
/// shown offers, and syncing while online.
///
/// A session maps the snapshots' timeline onto server time: server time at the first snapshot is the
/// device clock plus the offset learned at the last sync, and it advances with snapshot time. So a
/// replay behaves as if the walk happened now, at the capture's pace, and a live scan uses real time.
public final class OfferSession {
    public let cache: OfferCache
    /// One region per retailer UUID in the cache.
    public private(set) var regions: [BeaconIdentityConstraint]
    /// The cached retailers' names by proximity UUID: what the screen calls their beacons.
    public private(set) var retailerNames: [UUID: String]
    /// The cached retailers, by name.
    public private(set) var retailers: [CatalogRetailer]
    /// The offers this session showed (claimed and recorded as seen).
    public private(set) var shownCount = 0
    /// The cached stores, whose geofences a scan with a location monitors.
    public private(set) var stores: [ResolvedStore]
    /// Counts the syncs that changed the catalog, so a caller knows when to reload regions and stores.
    public private(set) var catalogRevision = 0
    /// The area syncs fetch (nil: the whole catalog); starts as the area the cache holds.
    public private(set) var syncArea: CatalogArea?
    private var presenter: OfferPresenter
    private let sync: SyncEngine?
    private let syncInterval: Double
    private let deviceClock: () -> Date
    private var serverOrigin: (time: Double, serverTime: Date)?
    /// Seconds the server's clock is ahead of the device's, as the last sync learned.
    private var serverTimeOffset: Double
    private var lastSync: Date?
    /// The last snapshot's time and server time: when an offer shown between snapshots is shown.
    private var lastSnapshot: (time: Double, serverTime: Date)?
    /// The beacons in range resolved so far (nil: not an offer); only the few beacons a scan meets near are
    /// looked up, and a beacon not heard for its tracking age is forgotten (looked up again if it comes
    /// back), so made-up identities heard over a long scan do not pile up here.
    private var resolved: [BeaconIdentity: ResolvedOffer?] = [:]
    /// Whether the service resolved a secure identity heard by this scan to the beacon, valid at the server time:
    /// an offer that requires presence shows only then, not for a static clone of its beacon (nil: never).
    public var presenceVerified: ((BeaconIdentity, Date) -> Bool)?
    /// Offers a scan claimed and was killed before showing (`OfferCache.unshown`): recorded as seen, they
    /// show here as if they were not, until shown.
    private var unshown: Set<UUID>
    /// The cache carries a working set: a UUID of the directory heard here and not carried is fetched (or queued).
    private let carriesWorkingSet: Bool
    /// The UUIDs heard so far with a working set: each is noted once a session (a carried retailer's as wanted
    /// again, another's looked up in the directory).
    private var heardThisSession: Set<UUID> = []

    /// `sync` is nil for `--offline`; otherwise `syncIfDue` syncs every `syncInterval` device seconds. Quiet hours
    /// are read in `timeZone` (the device's).
    public init(
        cache: OfferCache, minimumProximity: Proximity = .near, holding: OfferPresenter.Holding,
        sync: SyncEngine?, syncInterval: Double = 60, timeZone: TimeZone = .current, deviceClock: @escaping () -> Date
    ) throws(ClientError) {
        self.cache = cache
        self.sync = sync
        self.syncInterval = syncInterval
        self.deviceClock = deviceClock
        let unshown = try cache.unshown()
        self.unshown = unshown
        presenter = OfferPresenter(
            minimumProximity: minimumProximity, holding: holding,
            seen: try cache.seen().filter { !unshown.contains($0.key) },
            attention: ShopperAttention(
                try cache.preferences, timeZone: timeZone, serverTimeOffset: try cache.serverTimeOffset),
            dayShows: try cache.dayShows())
        retailers = try cache.retailers()
        (regions, retailerNames) = Self.regions(retailers)
        stores = try cache.stores()
        syncArea = try cache.catalogArea
        serverTimeOffset = try cache.serverTimeOffset
        carriesWorkingSet = try cache.carriesWorkingSet
    }

    /// The server's clock now: the device clock plus the offset learned at the last sync.
    public func serverNow() -> Date { deviceClock().addingTimeInterval(serverTimeOffset) }

    /// The regions and retailer names of the cached retailers (by name, so a UUID two share is the first's).
    private static func regions(_ retailers: [CatalogRetailer]) -> ([BeaconIdentityConstraint], [UUID: String]) {
        let names = Dictionary(retailers.map { ($0.uuid, $0.name) }) { first, _ in first }
        let regions = names.keys.sorted { $0.uuidString < $1.uuidString }.map { BeaconIdentityConstraint(uuid: $0) }
        return (regions, names)
    }

    /// The offer on screen, if any.
    public var current: OfferPresentation? { presenter.current }

    /// How many offers the shopper's attention held back, by reason (an offer once per reason).
    public var heldCounts: [HoldReason: Int] { presenter.held.mapValues(\.count) }

    /// How many distinct offers were held back, whatever the reason.
    public var heldCount: Int { presenter.held.values.reduce(into: Set<UUID>()) { $0.formUnion($1) }.count }

    /// How many offers wait for the one on screen to be dismissed.
    public var waitingCount: Int { presenter.waiting.count }

    /// The shopper dismissed the offer on screen (`d`, a notification's Dismiss, or after a redemption); the
    /// next waiting offer shows at once, at the last snapshot's time, claimed as `update` claims it (`show` as
    /// there: a terminal draws the offer it returns, a notification is posted).
    @discardableResult
    public func dismiss(show: (OfferPresentation) -> () -> Void = { _ in {} }) throws(ClientError) -> OfferPresentation? {
        presenter.dismiss()
        guard let last = lastSnapshot else { return nil }
        return try claimed(presenter.showWaiting(time: last.time, serverTime: last.serverTime), show: show)
    }

    /// The cached offer a beacon announces.
    private func offer(for identity: BeaconIdentity) throws(ClientError) -> ResolvedOffer? {
        if let known = resolved[identity] { return known }
        let found = try cache.offer(uuid: identity.uuid, major: identity.major, minor: identity.minor)
        resolved[identity] = found
        return found
    }

    /// Feeds one ranging snapshot; returns the offer it shows, already claimed and recorded as seen (cache
    /// and outbox in one transaction; nil when another scan on this device claimed it first). `show` makes,
    /// before the claim, what shows the offer, run as soon as the claim commits (`ScanOutput.show`); the
    /// claim is settled once it returns, so an offer claimed and never shown shows in the next scan.
    public func update(
        time: Double, beacons: [BeaconProximity], show: (OfferPresentation) -> () -> Void = { _ in {} }
    ) throws(ClientError) -> OfferPresentation? {
        if serverOrigin == nil {
            serverOrigin = (time, deviceClock().addingTimeInterval(try cache.serverTimeOffset))
        }
        let origin = serverOrigin!
        let serverTime = origin.serverTime.addingTimeInterval(time - origin.time)
        // Only a beacon near enough to show its offer needs it.
        for beacon in beacons
        where beacon.proximity <= presenter.minimumProximity && beacon.proximity != .unknown
            && resolved[beacon.identity] == nil
        {
            _ = try offer(for: beacon.identity)
        }
        forgetResolutions(keeping: beacons)
        let table = resolved
        let verified = presenceVerified
        lastSnapshot = (time, serverTime)
        return try claimed(
            presenter.update(
                time: time, serverTime: serverTime, beacons: beacons,
                resolve: { identity in
                    guard let offer = table[identity] ?? nil else { return nil }
                    if offer.offer.presenceRequired == true, verified?(identity, serverTime) != true { return nil }
                    return offer
                }),
            show: show)
    }

    /// Keeps the resolutions of the beacons in `beacons` that are not lost (`.unknown`: unheard for their
    /// tracking age); the table is rebuilt only when it holds one of another beacon.
    private func forgetResolutions(keeping beacons: [BeaconProximity]) {
        var kept = 0
        for beacon in beacons where beacon.proximity != .unknown && resolved[beacon.identity] != nil { kept += 1 }
        guard kept < resolved.count else { return }
        var current: [BeaconIdentity: ResolvedOffer?] = [:]
        for beacon in beacons where beacon.proximity != .unknown {
            if let known = resolved[beacon.identity] { current[beacon.identity] = known }
        }
        resolved = current
    }

    /// `shown`, claimed and recorded as seen; when another scan on this device claimed it first, the next
    /// waiting offer (held until dismissed), or nil.
    private func claimed(
        _ shown: OfferPresentation?, show: (OfferPresentation) -> () -> Void
    ) throws(ClientError) -> OfferPresentation? {
        var candidate = shown
        while let shown = candidate {
            // The server is told the real moment in server time: a replay runs faster than its capture, whose
            // timeline would put the sighting in the future.
            let now = deviceClock().addingTimeInterval(try cache.serverTimeOffset)
            let offer = shown.offer.offer
            let showing = show(shown)
            if try cache.claimShown(
                offer.id, shownAt: shown.serverTime, reportedAt: min(now, shown.serverTime),
                reshowAfter: offer.reshowAfterSeconds, showsPerDay: offer.showsPerDay)
            {
                showing()
                // In front of the shopper: a kill from here on may show it again, never lose it.
                try cache.shown(offer.id)
                unshown.remove(offer.id)
                shownCount += 1
                return shown
            }
            // Another scan on this device showed it first.
            unshown.remove(offer.id)
            presenter.dismiss()
            for (offerID, seenAt) in try cache.seen() where offerID == offer.id { presenter.noteSeen(offerID, at: seenAt) }
            for count in try cache.dayShows() where count.offerID == offer.id { presenter.noteDayShows(count) }
            candidate = presenter.showWaiting(time: shown.time, serverTime: shown.serverTime)
        }
        return nil
    }

    /// Feeds one snapshot of the `Ranger`. Only a beacon of a cached retailer's UUID can announce an offer
    /// (offers are cached with their retailer), so the others are left out here: a crowd of beacons of no
    /// retailer cost the gate a few hash lookups each per snapshot, a fifth of a replay.
    public func update(
        _ snapshot: RangingSnapshot, show: (OfferPresentation) -> () -> Void
    ) throws(ClientError) -> OfferPresentation? {
        var beacons: [BeaconProximity] = []
        // A store's beacons share a UUID or a few: the last answer usually holds for the next beacon.
        var last: (uuid: UUID, isRetailer: Bool)?
        for beacon in snapshot.beacons {
            let uuid = beacon.identity.uuid
            if last?.uuid != uuid {
                if carriesWorkingSet, heardThisSession.insert(uuid).inserted {
                    if retailerNames[uuid] == nil {
                        try heard(uuid)
                    } else {
                        try cache.noteHeardCarried(uuid, at: deviceClock())
                    }
                }
                last = (uuid, retailerNames[uuid] != nil)
            }
            if last!.isRetailer { beacons.append(BeaconProximity(identity: beacon.identity, proximity: beacon.proximity)) }
        }
        return try update(time: snapshot.time, beacons: beacons, show: show)
    }

    /// Syncs when online and `syncInterval` device seconds have passed since the last sync (or none
    /// happened yet); then merges the account's seen set and drops resolutions the catalog may have
    /// changed. Returns nil when no sync was due.
    public func syncIfDue() throws(ClientError) -> SyncReport? {
        guard let sync else { return nil }
        let now = deviceClock()
        if let lastSync, now.timeIntervalSince(lastSync) < syncInterval { return nil }
        return try run(sync, at: now)
    }

    /// Syncs the catalog around a new point now (the shopper left the area synced before), when
    /// online; nil when offline. Later syncs keep to this area.
    public func sync(area: CatalogArea) throws(ClientError) -> SyncReport? {
        guard let sync else { return nil }
        syncArea = area
        return try run(sync, at: deviceClock())
    }

    /// A UUID of a retailer this device does not carry: queued for the next sync if the directory knows it, and
    /// fetched at once when online (by its bucket), its offers shown from this snapshot on. A fetch that fails on
    /// the network leaves it queued.
    private func heard(_ uuid: UUID) throws(ClientError) {
        guard try cache.directoryKnows(uuid) else { return }
        try cache.noteHeard(uuid, at: deviceClock())
        guard let sync else { return }
        let report: SyncReport
        do throws(ClientError) {
            report = try sync.fetchHeard()
        } catch .network {
            return
        }
        if report.catalogChanged { try reloadCatalog() }
    }

    /// The UUID of `retailerID`, whose secure beacon the service resolved: a retailer this device does not carry is
    /// fetched first, as if its UUID were heard (the resolution told the service which beacon already). Nil when it
    /// is not in the cache after that (offline, or not in the directory).
    public func uuidOfResolved(_ retailerID: UUID) throws(ClientError) -> UUID? {
        if let uuid = retailers.first(where: { $0.id == retailerID })?.uuid { return uuid }
        guard carriesWorkingSet, let uuid = try cache.directoryUUID(of: retailerID),
            heardThisSession.insert(uuid).inserted
        else { return nil }
        try heard(uuid)
        return retailers.first { $0.id == retailerID }?.uuid
    }

    private func reloadCatalog() throws(ClientError) {
        resolved = [:]
        retailers = try cache.retailers()
        (regions, retailerNames) = Self.regions(retailers)
        stores = try cache.stores()
        catalogRevision += 1
    }

    private func run(_ sync: SyncEngine, at now: Date) throws(ClientError) -> SyncReport {
        lastSync = now
        let report = try sync.sync(area: syncArea)
        serverTimeOffset = try cache.serverTimeOffset
        for (offerID, seenAt) in try cache.seen() where !unshown.contains(offerID) {
            presenter.noteSeen(offerID, at: seenAt)
        }
        for count in try cache.dayShows() { presenter.noteDayShows(count) }
        // Another device may have muted a retailer or changed the quiet hours or caps.
        presenter.attention = ShopperAttention(
            try cache.preferences, timeZone: presenter.attention.timeZone, serverTimeOffset: try cache.serverTimeOffset)
        if report.catalogChanged { try reloadCatalog() }
        return report
    }
}
