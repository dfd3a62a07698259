import Foundation
import LoyaltyAPI

// The queue of secure-beacon sightings a scan could not send, sent at sync before the seen items (a seen item of
// an offer on a secure beacon is taken only after its sighting).

extension SyncEngine {
    /// What became of the queued sightings a sync sent.
    public struct SightingsSent: Sendable, Equatable {
        public var resolved = 0
        public var unresolved = 0
        /// Older than the service accepts, or refused for what they are (never retried).
        public var dropped = 0
        /// The presence offers of the beacons they verified, recorded as seen (the sync shows them): the visit an
        /// offline scan could not confirm, confirmed.
        public var offers: [ResolvedOffer] = []

        public init() {}
    }

    /// Sends the queue oldest first in batches, each answered batch leaving it; first drops what is too old to
    /// verify (`SecureBeaconResolver.maximumAge`, by server time). A batch the service refuses for what it is (a
    /// 4xx but 429) is dropped too; an unreachable or overloaded service stops the sync, the queue kept. With
    /// `recordingOffers`, the presence offers of the beacons they verify are recorded as seen (`offers`).
    public func sendSightings(recordingOffers: Bool = true) throws(ClientError) -> SightingsSent {
        var sent = SightingsSent()
        let serverNow = now().addingTimeInterval(try cache.serverTimeOffset)
        let retailers = Dictionary(try cache.retailers().map { ($0.id, $0.uuid) }) { first, _ in first }
        sent.dropped += try cache.dropSightings(heardBefore: serverNow.addingTimeInterval(-SecureBeaconResolver.maximumAge))
        while true {
            let queued = try cache.queuedSightings(limit: Validation.sightingsPerBatch.upperBound)
            guard !queued.isEmpty else { return sent }
            do {
                let resolution = try api.resolveSightings(queued.map(\.sighting), credential)
                let resolved = Set(resolution.beacons.map(\.index)).filter(queued.indices.contains)
                sent.resolved += resolved.count
                sent.unresolved += queued.count - resolved.count
                for beacon in resolution.beacons where recordingOffers && resolved.contains(beacon.index) {
                    guard let uuid = retailers[beacon.retailerID],
                        let offer = try cache.offer(uuid: uuid, major: beacon.major, minor: beacon.minor),
                        offer.offer.presenceRequired == true, offer.offer.isValid(at: serverNow),
                        !sent.offers.contains(offer),
                        try cache.claimShown(
                            offer.offer.id, shownAt: serverNow, reportedAt: serverNow,
                            reshowAfter: offer.offer.reshowAfterSeconds, showsPerDay: offer.offer.showsPerDay)
                    else { continue }
                    try cache.shown(offer.offer.id)
                    sent.offers.append(offer)
                }
            } catch .server(let status, let code, let message) {
                guard status < 500, status != 429 else { throw .server(status: status, code: code, message: message) }
                sent.dropped += queued.count
            }
            try cache.removeQueuedSightings(queued.map(\.id))
        }
    }
}
