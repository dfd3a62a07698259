import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

/// The JSON lines the client commands print with `--json`, keys in the order shown: what scripts read.
public enum ClientJSONLines {
    /// `retailer offers` and `retailer offer set`.
    public static func offer(_ offer: Offer) -> String {
        object([
            ("id", id(offer.id)), ("major", .int(Int(offer.major))), ("minor", .int(Int(offer.minor))),
            ("title", .string(offer.title)), ("description", optional(offer.description)),
            ("category", optional(offer.category)), ("image_url", optional(offer.imageURL)),
            ("starts_at", timestamp(offer.startsAt)), ("ends_at", timestamp(offer.endsAt)),
            ("per_shopper_limit", .int(offer.perShopperLimit)), ("total_limit", optional(offer.totalLimit)),
            ("reshow_after_s", optional(offer.reshowAfterSeconds)),
        ])
    }

    /// `retailer store list` and `retailer store set`.
    public static func store(_ store: RetailStore) -> String {
        object([
            ("id", id(store.id)), ("store_id", .string(store.storeID)), ("name", .string(store.name)),
            ("latitude", .double(store.latitude)), ("longitude", .double(store.longitude)),
            ("radius_m", .int(store.radiusMetres)),
        ])
    }

    /// `retailer stats`, one line per offer.
    public static func statistics(_ entry: OfferStatistics) -> String {
        object([
            ("offer_id", id(entry.offerID)), ("major", .int(Int(entry.major))), ("minor", .int(Int(entry.minor))),
            ("title", .string(entry.title)), ("seen_by", .int(entry.seenBy)),
            ("redemptions", .int(entry.redemptions)), ("accepted", .int(entry.accepted)),
            ("remaining", optional(entry.remaining)),
        ])
    }

    /// `devices`, one line per device.
    public static func device(_ device: Device) -> String {
        object([
            ("id", id(device.id)), ("name", optional(device.name)), ("created_at", timestamp(device.createdAt)),
            ("revoked_at", timestamp(device.revokedAt)), ("current", .bool(device.current)),
        ])
    }

    /// `account create` (`account_created`) and `account link CODE` (`device_linked`).
    public static func joined(_ device: DeviceCredentials, event: String) -> String {
        object([("event", .string(event)), ("account_id", id(device.accountID)), ("device_id", id(device.deviceID))])
    }

    /// `account show`: the account, this device, and what its cache holds.
    public static func account(
        _ device: DeviceCredentials, server: (url: URL, source: ClientConfig.ServerSource), cache: OfferCache
    ) throws(ClientError) -> String {
        object([
            ("account_id", id(device.accountID)), ("device_id", id(device.deviceID)),
            ("server", .string(server.url.absoluteString)), ("server_from", .string(server.source.rawValue)),
            ("cached_offers", .int(try cache.offerCount)),
            ("unsent_seen", .int(try cache.outboxCount)), ("last_sync", timestamp(try cache.lastSync)),
            ("catalog_partial", .bool(try cache.catalogIsPartial)),
        ])
    }

    /// `account link`: the code for another device.
    public static func linkCode(_ link: LinkCode) -> String {
        object([("code", .string(link.code)), ("expires_at", timestamp(link.expiresAt))])
    }

    /// The shopper's warning while the cache holds only the first pages of a full catalog: the offers of the
    /// pages not fetched yet are missing, so their beacons show nothing.
    public static let partialCatalogWarning =
        "the offer catalog is incomplete: a sync stopped midway; run `loyalty sync`"

    /// `{"event":"warning","code":"catalog_partial","message":..}`, before what a partial cache shows.
    public static let catalogPartial = object([
        ("event", .string("warning")), ("code", .string("catalog_partial")),
        ("message", .string(partialCatalogWarning)),
    ])

    /// `sync`.
    public static func synced(_ report: SyncReport) -> String {
        object([
            ("event", .string("synced")), ("pushed", .int(report.pushed)), ("full", .bool(report.fullCatalog)),
            ("catalog_changed", .bool(report.catalogChanged)), ("offers_received", .int(report.offersReceived)),
            ("offers_removed", .int(report.offersRemoved)), ("seen_pulled", .int(report.seenPulled)),
            ("cached_offers", .int(report.cachedOffers)),
        ])
    }

    /// `history`: an offer the account saw.
    public static func seen(_ offerID: UUID, retailer: String, title: String, at date: Date) -> String {
        object([
            ("event", .string("seen")), ("offer", id(offerID)), ("retailer", .string(retailer)),
            ("title", .string(title)), ("at", timestamp(date)),
        ])
    }

    /// `history`: a redemption of this device, done or still pending.
    public static func redemption(_ record: OfferCache.RedemptionRecord, retailer: String, title: String) -> String {
        object([
            ("event", .string(record.redemption == nil ? "redeem_pending" : "redeemed")),
            ("offer", id(record.offerID)), ("retailer", .string(retailer)), ("title", .string(title)),
            ("code", optional(record.redemption?.code)),
            ("at", timestamp(record.redemption?.redeemedAt ?? record.requestedAt)),
            ("used_at_till", timestamp(record.redemption?.acceptedAt)),
        ])
    }

    /// `redeem`.
    public static func redeemed(_ redemption: Redemption, of offer: Offer) -> String {
        object([
            ("event", .string("redeemed")), ("offer", id(offer.id)), ("title", .string(offer.title)),
            ("code", .string(redemption.code)), ("redemption_id", id(redemption.id)),
            ("redeemed_at", timestamp(redemption.redeemedAt)),
        ])
    }

    /// A one-off line: the fields in order.
    public static func object(_ fields: [(String, JSONValue)]) -> String { JSONValue.object(fields).text }

    /// `2026-01-31T09:00:00Z`, or null.
    public static func timestamp(_ date: Date?) -> JSONValue {
        date.map { .string(LoyaltyJSON.formatTimestamp($0)) } ?? .null
    }

    static func id(_ id: UUID) -> JSONValue { .string(id.uuidString.lowercased()) }
    static func optional(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }
    static func optional(_ number: Int?) -> JSONValue { number.map { .int($0) } ?? .null }
}
