import Beacons
import Foundation
import LoyaltyAPI

/// Resolves secure beacons through the service as a scan hears them (docs/SECURE-BEACONS.md): an Eddystone EID,
/// or an iBeacon under a cached retailer's UUID whose (major, minor) no cached offer has (a rotating identity).
///
/// The hot path (`resolve`) is dictionary lookups: a resolved identity becomes its beacon (retailer UUID, major,
/// minor) until the window it was resolved in ends, and from then on ranges, monitors and shows offers as a static
/// beacon heard at that RSSI; a new one joins the batch being gathered. `advance` hands a batch over every
/// `batchInterval` seconds of the scan's clock (or at 100 sightings) to a `SightingSender`, which posts it on a
/// thread of its own, and applies the answers that came. Each identity is asked once a window; one that resolves
/// to nothing is not asked again for `retryUnresolvedAfter`. What cannot be sent (offline, or the service
/// unreachable) is queued in the cache for the next sync, and sent by the scan once the service answers again.
public final class SecureBeaconResolver {
    /// What the scan did with the secure identities it heard.
    public struct Counts: Sendable, Equatable {
        /// Sightings the service resolved to a beacon (verified presence).
        public var resolved: Int
        /// Sightings the service answered and did not resolve.
        public var unresolved: Int
        /// Sightings queued in the cache for later (offline, or the service unreachable).
        public var queued: Int
        /// Sightings dropped: older than the service accepts, beyond the queue's bound, or refused for what they are.
        public var dropped: Int

        public init(resolved: Int = 0, unresolved: Int = 0, queued: Int = 0, dropped: Int = 0) {
            self.resolved = resolved
            self.unresolved = unresolved
            self.queued = queued
            self.dropped = dropped
        }
    }

    /// The longest a sighting can wait and still verify: the service accepts one heard within a window of now,
    /// and the longest window is 2^15 s. An older one is dropped unsent.
    public static let maximumAge: Double = 32_768
    /// The most identities each table holds before it is pruned.
    static let tableBound = 4096
    /// Scan seconds between looks at the answers and the queue.
    static let checkInterval = 0.1

    public private(set) var counts = Counts()
    public let batchInterval: Double
    /// Seconds before an identity that resolved to nothing is asked again (its beacon may be provisioned since).
    public let retryUnresolvedAfter: Double
    /// Device seconds between attempts to send the queue while the service does not answer.
    public let retryQueueAfter: Double

    private let offers: OfferSession
    private let sender: SightingSender?
    private let waitsForAnswers: Bool
    private let serverNow: () -> Date
    private var loadedRevision: Int?
    private var retailerUUIDs: [UUID: UUID] = [:]
    /// Whether a cached retailer's (uuid, major, minor) is a cached offer's beacon (static, not a candidate).
    private var isStatic: [BeaconIdentity: Bool] = [:]
    private var resolved: [SecureIdentity: (beacon: BeaconIdentity, until: Date)] = [:]
    /// The beacons the service resolved, until when (the latest of their identities' windows).
    private var verified: [BeaconIdentity: Date] = [:]
    private var notResolved: [SecureIdentity: Date] = [:]
    private var pending: [SecureIdentity: Sighting] = [:]
    private var inFlight: Set<SecureIdentity> = []
    private var batchOpened: Double?
    private var origin: (time: Double, serverTime: Date)?
    /// When the queue was last sent or found empty (device clock); nil: not yet this scan.
    private var queueTried: Date?
    private var queueInFlight = false
    /// The scan time before which `advance` has nothing to do: it runs for every sighting, so it looks at the
    /// answers and the queue a few times a second of the scan's clock, not at each.
    private var nextCheck = -Double.infinity

    /// `sender` nil: offline, every new identity goes to the queue. `waitsForAnswers`: a replay, which waits for
    /// each batch's answer (the capture's clock waits with it), so that the same capture gives the same output.
    public init(
        offers: OfferSession, sender: SightingSender?, waitsForAnswers: Bool, batchInterval: Double = 1,
        retryUnresolvedAfter: Double = 300, retryQueueAfter: Double = 30
    ) {
        self.offers = offers
        self.sender = sender
        self.waitsForAnswers = waitsForAnswers
        self.batchInterval = batchInterval
        self.retryUnresolvedAfter = retryUnresolvedAfter
        self.retryQueueAfter = retryQueueAfter
        serverNow = offers.serverNow
        offers.presenceVerified = { [weak self] beacon, at in self?.isVerified(beacon, at: at) ?? false }
    }

    /// Whether the service resolved an identity heard by this scan to `beacon`, in a window that holds at `date`.
    public func isVerified(_ beacon: BeaconIdentity, at date: Date) -> Bool {
        guard let until = verified[beacon] else { return false }
        return date < until
    }

    /// The sighting as the scan should see it: a resolved secure identity as its beacon, anything else unchanged.
    /// A new candidate joins the next batch.
    public func resolve(_ sighting: BeaconSighting) throws(ClientError) -> BeaconSighting {
        guard let identity = try candidate(sighting.frame) else { return sighting }
        let heardAt = serverTime(sighting.time)
        if let known = resolved[identity] {
            if heardAt < known.until {
                var seen = sighting
                seen.frame = BeaconFrame(kind: .iBeacon, identity: known.beacon, measuredPower: sighting.frame.measuredPower)
                return seen
            }
            resolved[identity] = nil
        }
        if let until = notResolved[identity], heardAt < until { return sighting }
        if pending[identity] != nil || inFlight.contains(identity) { return sighting }
        pending[identity] = identity.sighting(heardAt: min(heardAt, serverNow()), rssi: Int(sighting.rssi))
        if batchOpened == nil { batchOpened = sighting.time }
        return sighting
    }

    /// The scan's clock reached `time`: applies the answers that came, hands over a batch that is due, and sends
    /// the queue when it is time to try.
    public func advance(to time: Double) throws(ClientError) {
        guard time >= nextCheck || pending.count >= Validation.sightingsPerBatch.upperBound else { return }
        nextCheck = time + min(Self.checkInterval, batchInterval)
        if let sender { try apply(sender.answers()) }
        if let opened = batchOpened, time - opened >= batchInterval || pending.count >= Validation.sightingsPerBatch.upperBound {
            try sendPending()
        }
        try sendQueueIfDue()
    }

    /// The scan ends: what is gathered is sent and its answer awaited (what does not go is queued).
    public func finish() throws(ClientError) {
        try sendPending()
        if let sender {
            try apply(sender.waitForAnswers())
            sender.close()
        }
    }

    // MARK: candidates

    private func candidate(_ frame: BeaconFrame) throws(ClientError) -> SecureIdentity? {
        switch frame.kind {
        case .eddystoneEID:
            return .eid(frame.identity.ephemeralID.value)
        case .iBeacon:
            reloadIfSynced()
            let identity = frame.identity
            guard retailerUUIDs[identity.uuid] != nil else { return nil }
            if let known = isStatic[identity] { return known ? nil : .rotating(identity) }
            if isStatic.count >= Self.tableBound { isStatic = [:] }
            let found = try offers.cache.offer(uuid: identity.uuid, major: identity.major, minor: identity.minor) != nil
            isStatic[identity] = found
            return found ? nil : .rotating(identity)
        default:
            return nil
        }
    }

    /// The cached retailers, again after a sync changed the catalog.
    private func reloadIfSynced() {
        guard loadedRevision != offers.catalogRevision else { return }
        loadedRevision = offers.catalogRevision
        retailerUUIDs = [:]
        for retailer in offers.retailers { retailerUUIDs[retailer.uuid] = retailer.id }
        isStatic = [:]
    }

    /// Server time at scan time `time`: server time now at the first sighting, advancing with the scan's clock.
    private func serverTime(_ time: Double) -> Date {
        if origin == nil { origin = (time, serverNow()) }
        return origin!.serverTime.addingTimeInterval(time - origin!.time)
    }

    // MARK: sending

    private func sendPending() throws(ClientError) {
        batchOpened = nil
        guard !pending.isEmpty else { return }
        let identities = Array(pending.keys)
        let batch = SightingSender.Batch(
            sightings: identities.map { pending[$0]! }, identities: identities,
            queueIDs: Array(repeating: nil, count: identities.count))
        pending = [:]
        try submit(batch)
    }

    private func submit(_ batch: SightingSender.Batch) throws(ClientError) {
        guard let sender else {
            try queue(batch)
            return
        }
        inFlight.formUnion(batch.identities)
        sender.submit(batch)
        if waitsForAnswers { try apply(sender.waitForAnswers()) }
    }

    /// Sends the oldest queued sightings, once per `retryQueueAfter` while the service does not answer, and at
    /// once after it answered a batch; those too old to verify are dropped first.
    private func sendQueueIfDue() throws(ClientError) {
        guard sender != nil, !queueInFlight else { return }
        let now = Date()
        if let tried = queueTried, now.timeIntervalSince(tried) < retryQueueAfter { return }
        queueTried = now
        counts.dropped += try offers.cache.dropSightings(heardBefore: serverNow().addingTimeInterval(-Self.maximumAge))
        let queued = try offers.cache.queuedSightings(limit: Validation.sightingsPerBatch.upperBound)
        guard !queued.isEmpty else { return }
        let usable = queued.compactMap { item in SecureIdentity(item.sighting).map { (item, $0) } }
        // A row naming no identity cannot be sent: it leaves the queue.
        try offers.cache.removeQueuedSightings(queued.filter { SecureIdentity($0.sighting) == nil }.map(\.id))
        guard !usable.isEmpty else { return }
        queueInFlight = true
        try submit(
            SightingSender.Batch(
                sightings: usable.map(\.0.sighting), identities: usable.map(\.1), queueIDs: usable.map(\.0.id)))
    }

    /// Queues a batch that could not be sent (its rows already queued stay where they are).
    private func queue(_ batch: SightingSender.Batch) throws(ClientError) {
        let fresh = zip(batch.sightings, batch.queueIDs).filter { $0.1 == nil }.map(\.0)
        counts.dropped += try offers.cache.queueSightings(fresh)
        counts.queued += fresh.count
        // Not asked again this window: it waits in the queue.
        for identity in batch.identities { holdOff(identity) }
    }

    private func apply(_ answers: [SightingSender.Answer]) throws(ClientError) {
        for answer in answers {
            switch answer {
            case .resolved(let batch, let resolution):
                try apply(batch, resolution)
            case .failed(let batch, let error):
                inFlight.subtract(batch.identities)
                if batch.queueIDs.contains(where: { $0 != nil }) { queueInFlight = false }
                switch error {
                case .server(let status, _, _) where status < 500 && status != 429:
                    // Refused for what it is (a sighting the service will never take): retrying cannot help.
                    let queued = batch.queueIDs.compactMap { $0 }
                    try offers.cache.removeQueuedSightings(queued)
                    counts.dropped += batch.sightings.count
                    for identity in batch.identities { holdOff(identity) }
                default:
                    // Unreachable, overloaded or rate-limited: the queue keeps it for the next attempt or sync.
                    try queue(batch)
                }
            }
        }
    }

    private func apply(_ batch: SightingSender.Batch, _ resolution: SightingResolution) throws(ClientError) {
        inFlight.subtract(batch.identities)
        reloadIfSynced()
        var answered = Set<Int>()
        for beacon in resolution.beacons where batch.identities.indices.contains(beacon.index) {
            guard answered.insert(beacon.index).inserted else { continue }
            counts.resolved += 1
            // A beacon of a retailer this device does not carry is fetched (a working set); one still not in the cache
            // (offline, not in the directory) shows nothing: it is verified all the same.
            guard let uuid = try offers.uuidOfResolved(beacon.retailerID) else { continue }
            if resolved.count >= Self.tableBound {
                let now = serverNow()
                resolved = resolved.filter { $0.value.until > now }
                verified = verified.filter { $0.value > now }
            }
            let identity = BeaconIdentity(uuid: uuid, major: beacon.major, minor: beacon.minor)
            resolved[batch.identities[beacon.index]] = (identity, beacon.validUntil)
            verified[identity] = max(verified[identity] ?? beacon.validUntil, beacon.validUntil)
        }
        for index in batch.identities.indices where !answered.contains(index) {
            counts.unresolved += 1
            holdOff(batch.identities[index])
        }
        let queued = batch.queueIDs.compactMap { $0 }
        if !queued.isEmpty {
            try offers.cache.removeQueuedSightings(queued)
            queueInFlight = false
        }
        // The service answers: what waits in the queue goes at the next tick.
        queueTried = nil
    }

    /// Not asked again for `retryUnresolvedAfter`.
    private func holdOff(_ identity: SecureIdentity) {
        if notResolved.count >= Self.tableBound {
            let now = serverNow()
            notResolved = notResolved.filter { $0.value > now }
            if notResolved.count >= Self.tableBound { notResolved = [:] }
        }
        notResolved[identity] = serverNow().addingTimeInterval(retryUnresolvedAfter)
    }
}
