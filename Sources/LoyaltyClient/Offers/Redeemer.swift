import Beacons
import Foundation
import LoyaltyAPI

/// How the shopper names an offer: its id, or the beacon that announces it (`UUID:MAJOR:MINOR`).
public enum OfferReference: Sendable, Equatable {
    case id(UUID)
    case beacon(BeaconIdentity)

    public init(parsing text: String) throws(ClientError) {
        if let id = UUID(uuidString: text) {
            self = .id(id)
            return
        }
        guard let identity = try? BeaconIdentity(parsing: text) else {
            throw .notFound(.notAnOffer(text))
        }
        self = .beacon(identity)
    }

    /// The cached offer, or a `notFound` error suggesting a sync.
    public func resolve(in cache: OfferCache) throws(ClientError) -> ResolvedOffer {
        let found =
            switch self {
            case .id(let id): try cache.offer(id: id)
            case .beacon(let identity):
                try cache.offer(uuid: identity.uuid, major: identity.major, minor: identity.minor)
            }
        guard let found else {
            // A full sync cut short leaves offers out: saying so spares the shopper doubting the beacon or the id.
            throw .notFound(.notCached(catalogPartial: try cache.catalogIsPartial))
        }
        return found
    }
}

/// Redeems offers so that a lost answer never redeems twice: the `Idempotency-Key` is stored in the
/// cache before the request leaves, and a retry of the same offer sends the same key.
public struct Redeemer {
    public let cache: OfferCache
    public let api: LoyaltyAPIClient
    public let credential: Credential
    public let now: () -> Date

    public init(cache: OfferCache, api: LoyaltyAPIClient, credential: Credential, now: @escaping () -> Date) {
        self.cache = cache
        self.api = api
        self.credential = credential
        self.now = now
    }

    public func redeem(_ offer: ResolvedOffer) throws(ClientError) -> Redemption {
        // The server redeems only an offer in the account's seen set: sightings not sent yet (a scan offline) go
        // first. As best it can: if they cannot go, the redemption's own answer says what is wrong.
        let engine = SyncEngine(cache: cache, api: api, credential: credential, now: now)
        // Sightings first: a presence offer's seen item is taken only after its beacon's.
        _ = try? engine.sendSightings()
        _ = try? engine.pushOutbox()
        let key = try cache.idempotencyKey(forRedeeming: offer.offer.id, now: now()) {
            UUID().uuidString.lowercased()
        }
        do {
            let redemption = try api.redeem(offerID: offer.offer.id, idempotencyKey: key, credential)
            try cache.completeRedemption(key: key, redemption)
            return redemption
        } catch {
            // A definite refusal frees the offer for a new attempt; after a network failure or a
            // server fault the answer may have been lost, so the key stays for the retry.
            if case .server(let status, _, _) = error, (400..<500).contains(status) {
                try cache.abandonRedemption(key: key)
            }
            throw error
        }
    }
}
