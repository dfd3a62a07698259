import Beacons
import Foundation
import LoyaltyAPI

/// A store of the cached catalog with the retailer it belongs to: what a geofence resolves to.
public struct ResolvedStore: Sendable, Equatable {
    public var store: RetailStore
    public var retailer: CatalogRetailer

    public init(store: RetailStore, retailer: CatalogRetailer) {
        self.store = store
        self.retailer = retailer
    }
}

/// An offer of the cached catalog with the retailer it belongs to: what a beacon resolves to.
public struct ResolvedOffer: Sendable, Equatable {
    public var offer: Offer
    public var retailer: CatalogRetailer

    public init(offer: Offer, retailer: CatalogRetailer) {
        self.offer = offer
        self.retailer = retailer
    }

    /// The beacon that announces this offer.
    public var identity: BeaconIdentity {
        BeaconIdentity(uuid: retailer.uuid, major: offer.major, minor: offer.minor)
    }
}

/// A beacon and how near it is: what the presenter needs of a ranging snapshot.
public struct BeaconProximity: Sendable, Hashable {
    public var identity: BeaconIdentity
    public var proximity: Proximity

    public init(identity: BeaconIdentity, proximity: Proximity) {
        self.identity = identity
        self.proximity = proximity
    }
}

/// An offer put in front of the shopper.
public struct OfferPresentation: Sendable, Equatable {
    public var offer: ResolvedOffer
    /// Capture (or live clock) time of the snapshot that showed it.
    public var time: Double
    /// Server time at that moment: what the seen set records.
    public var serverTime: Date

    public init(offer: ResolvedOffer, time: Double, serverTime: Date) {
        self.offer = offer
        self.time = time
        self.serverTime = serverTime
    }
}

/// The offers app's policy, made precise. Pure: it reads no clock and touches no storage.
///
/// An offer is shown only while its beacon is at `minimumProximity` or nearer; only if the account has
/// not seen it (on any device) or its `reshow_after_s` has passed since, or, for an offer with `shows_per_day`,
/// the account was shown it fewer times than that on the UTC day (on all its devices, as synced) and its beacon
/// came near anew since the last show here (or `reshow_after_s` passed); only inside its validity
/// window judged in server time; and never two at a time. Offers whose beacons are near together are
/// shown in the order the beacons came near. A shown offer stays until `dismiss()` or, with a dwell,
/// until that many seconds of snapshot time have passed.
///
/// Held until dismissed, the offers that came near while another was on screen wait their turn, in the
/// order they came, as long as their beacons stay near: one whose beacon went far or out of range (the
/// shopper walked on while reading, or a replay outran them) leaves the queue, neither shown nor seen, and
/// shows when its beacon is near again. A dwell runs on the walk's own clock, so there too an offer whose
/// beacon left before its turn is not shown.
///
/// The shopper's `attention` holds back an offer that could show (muted retailer, quiet hours, a cap on offers per
/// hour or day): held, it is neither shown nor seen, and shows once the bound lifts if its beacon is near still.
public struct OfferPresenter: Sendable {
    public enum Holding: Sendable, Equatable {
        /// Shown until the shopper dismisses it (the terminal's `d` or `r`).
        case untilDismissed
        /// Shown for this many seconds of snapshot time (`--json --dwell`).
        case dwell(Double)
    }

    public let minimumProximity: Proximity
    public let holding: Holding
    /// The latest time each offer was seen by the account, in server time.
    public private(set) var seen: [UUID: Date]
    /// The offer on screen.
    public private(set) var current: OfferPresentation?
    /// Offers that came near while another was on screen and are near still, in the order they came (held
    /// until dismissed).
    public private(set) var waiting: [ResolvedOffer] = []

    /// The shopper's bounds on interruptions.
    public var attention: ShopperAttention
    /// The offers held back by each reason (an offer once per reason, even if it showed later).
    public private(set) var held: [HoldReason: Set<UUID>] = [:]
    /// Offers the account saw in the 24 hours before the latest snapshot, and when: what the caps count.
    private var recent: [UUID: Date] = [:]
    /// For offers with `shows_per_day`: the account's shows on the latest UTC day known of each.
    private var dayShows: [UUID: (day: Int64, shows: Int)] = [:]
    /// The arrival (`near`'s order) of the beacon each offer was last shown for in this session: one stay near a
    /// beacon shows its offer once, however many shows a day it may have.
    private var shownArrival: [UUID: Int] = [:]

    /// Beacons at the minimum proximity or nearer, with the order in which they came near.
    private var near: [BeaconIdentity: (time: Double, order: Int)] = [:]
    private var arrivals = 0

    public init(
        minimumProximity: Proximity = .near, holding: Holding, seen: [UUID: Date] = [:],
        attention: ShopperAttention = ShopperAttention(), dayShows: [DayShows] = []
    ) {
        self.minimumProximity = minimumProximity
        self.holding = holding
        self.seen = seen
        self.attention = attention
        for count in dayShows { noteDayShows(count) }
        if let latest = seen.values.max() { recent = seen.filter { latest.timeIntervalSince($0.value) < 86_400 } }
    }

    /// Merges seen items learned elsewhere (a sync during the session), keeping the latest time.
    public mutating func noteSeen(_ offerID: UUID, at date: Date) {
        if let known = seen[offerID], known >= date { return }
        seen[offerID] = date
        recent[offerID] = date
    }

    /// Merges an offer's count of shows on a day learned elsewhere (the cache, a sync), keeping the larger.
    public mutating func noteDayShows(_ count: DayShows) {
        if let known = dayShows[count.offerID],
            known.day > count.day || (known.day == count.day && known.shows >= count.shows)
        {
            return
        }
        dayShows[count.offerID] = (count.day, count.shows)
    }

    /// The shopper closed the offer on screen.
    public mutating func dismiss() {
        current = nil
    }

    /// Feeds one ranging snapshot taken at `time` (server time `serverTime`); returns the offer it puts
    /// on screen, if any. `resolve` maps a beacon to its cached offer.
    public mutating func update(
        time: Double, serverTime: Date, beacons: [BeaconProximity],
        resolve: (BeaconIdentity) -> ResolvedOffer?
    ) -> OfferPresentation? {
        var stillNear: [BeaconIdentity: (time: Double, order: Int)] = [:]
        for beacon in beacons where beacon.proximity != .unknown && beacon.proximity <= minimumProximity {
            if let since = near[beacon.identity] {
                stillNear[beacon.identity] = since
            } else {
                arrivals += 1
                stillNear[beacon.identity] = (time, arrivals)
            }
        }
        near = stillNear
        if recent.values.contains(where: { serverTime.timeIntervalSince($0) >= 86_400 }) {
            recent = recent.filter { serverTime.timeIntervalSince($0.value) < 86_400 }
        }
        // Near when it came, maybe not when its turn comes: only an offer whose beacon is near shows.
        waiting.removeAll { near[$0.identity] == nil }

        if let shown = current, case .dwell(let seconds) = holding, time - shown.time >= seconds {
            current = nil
        }
        if let shown = current {
            guard holding == .untilDismissed else { return nil }
            for offer in eligibleNear(at: serverTime, resolve: resolve)
            where offer.offer.id != shown.offer.offer.id && !waiting.contains(where: { $0.offer.id == offer.offer.id })
            {
                waiting.append(offer)
            }
            return nil
        }
        if let next = showWaiting(time: time, serverTime: serverTime) { return next }
        guard let offer = eligibleNear(at: serverTime, resolve: resolve).first else { return nil }
        return show(offer, time: time, serverTime: serverTime)
    }

    /// Puts the first waiting offer that is still eligible on screen, when none is; nil when none waits.
    public mutating func showWaiting(time: Double, serverTime: Date) -> OfferPresentation? {
        guard current == nil else { return nil }
        while !waiting.isEmpty {
            let offer = waiting.removeFirst()
            if isEligible(offer.offer, at: serverTime), mayShow(offer, at: serverTime) {
                return show(offer, time: time, serverTime: serverTime)
            }
        }
        return nil
    }

    /// The offers of the beacons near now that may show, in the order the beacons came near; those the shopper's
    /// attention holds back are noted in `held`.
    private mutating func eligibleNear(
        at serverTime: Date, resolve: (BeaconIdentity) -> ResolvedOffer?
    ) -> [ResolvedOffer] {
        near.sorted { ($0.value.time, $0.value.order) < ($1.value.time, $1.value.order) }
            .compactMap { resolve($0.key) }
            .filter { !shownThisStay($0) && isEligible($0.offer, at: serverTime) && mayShow($0, at: serverTime) }
    }

    /// Whether an offer shown more than once a day was shown while its beacon has stayed near since (without
    /// `reshow_after_s`, what spaces its shows).
    private func shownThisStay(_ offer: ResolvedOffer) -> Bool {
        guard offer.offer.showsPerDay != nil, offer.offer.reshowAfterSeconds == nil,
            let arrival = shownArrival[offer.offer.id]
        else { return false }
        return near[offer.identity]?.order == arrival
    }

    /// Whether the shopper's attention lets `offer` show now; when not, it is noted in `held` with the reason.
    private mutating func mayShow(_ offer: ResolvedOffer, at serverTime: Date) -> Bool {
        guard let reason = attention.holdReason(for: offer, at: serverTime, recentShows: recent.values) else { return true }
        held[reason, default: []].insert(offer.offer.id)
        return false
    }

    private mutating func show(_ offer: ResolvedOffer, time: Double, serverTime: Date) -> OfferPresentation {
        let presentation = OfferPresentation(offer: offer, time: time, serverTime: serverTime)
        seen[offer.offer.id] = serverTime
        recent[offer.offer.id] = serverTime
        if offer.offer.showsPerDay != nil {
            let day = Offer.showDay(serverTime)
            dayShows[offer.offer.id] = (day, shows(of: offer.offer.id, on: day) + 1)
            shownArrival[offer.offer.id] = near[offer.identity]?.order
        }
        current = presentation
        return presentation
    }

    /// Inside its window and not seen, or seen long enough ago to show again, or under its day's cap of shows.
    public func isEligible(_ offer: Offer, at serverTime: Date) -> Bool {
        guard offer.isValid(at: serverTime) else { return false }
        guard let lastSeen = seen[offer.id] else { return true }
        if let cap = offer.showsPerDay {
            guard shows(of: offer.id, on: Offer.showDay(serverTime)) < cap else { return false }
            return offer.reshowAfterSeconds.map { serverTime.timeIntervalSince(lastSeen) >= Double($0) } ?? true
        }
        guard let reshow = offer.reshowAfterSeconds else { return false }
        return serverTime.timeIntervalSince(lastSeen) >= Double(reshow)
    }

    /// The account's shows of an offer on a UTC day, as far as this presenter knows.
    private func shows(of offerID: UUID, on day: Int64) -> Int {
        dayShows[offerID].map { $0.day == day ? $0.shows : 0 } ?? 0
    }
}
