import Foundation
import LoyaltyAPI
import LoyaltyClient

/// The JSON lines of the retailer's commands.
extension ClientJSONLines {
    /// `retailer register`.
    public static func retailerRegistered(_ credentials: RetailerCredentials) -> String {
        object([
            ("event", .string("retailer_registered")), ("id", id(credentials.id)),
            ("name", .string(credentials.name)), ("uuid", .string(credentials.uuid.uuidString)),
        ])
    }

    /// `retailer key show --json`: the key, and where it came from (`config` or `LOYALTY_RETAILER_KEY`).
    static func retailerKey(_ key: String, from: String) -> String {
        object([("event", .string("retailer_key")), ("api_key", .string(key)), ("from", .string(from))])
    }

    /// `retailer key set --json`: whose key was saved, never the key.
    static func retailerKeySet(_ credentials: RetailerCredentials) -> String {
        object([
            ("event", .string("retailer_key_set")), ("id", id(credentials.id)), ("name", .string(credentials.name)),
            ("uuid", .string(credentials.uuid.uuidString)),
        ])
    }

    /// `retailer stats --days N`, one line per day.
    public static func day(_ day: DayFigures) -> String {
        object([
            ("event", .string("day")), ("date", .string(day.date)), ("shown", .int(day.shown)),
            ("unique_shoppers", .int(day.uniqueShoppers)), ("redeemed", .int(day.redeemed)),
            ("accepted", .int(day.accepted)), ("conversion", day.conversion.map { .double($0) } ?? .null),
        ])
    }

    /// `retailer stats --days N`, one line per beacon.
    public static func beacon(_ beacon: BeaconHealth) -> String {
        object([
            ("event", .string("beacon")), ("major", .int(Int(beacon.major))), ("minor", .int(Int(beacon.minor))),
            ("last_heard_at", timestamp(beacon.lastHeardAt)), ("check_battery", .bool(beacon.checkBattery)),
        ])
    }

    /// `retailer till-key create`.
    public static func tillKeyCreated(_ key: TillKeyCredentials) -> String {
        object([
            ("event", .string("till_key_created")), ("id", id(key.id)), ("name", .string(key.name)),
            ("till_key", .string(key.tillKey)),
        ])
    }

    /// `retailer till-key list`, one line per key.
    public static func tillKey(_ key: TillKey) -> String {
        object([
            ("id", id(key.id)), ("name", .string(key.name)), ("created_at", timestamp(key.createdAt)),
            ("revoked_at", timestamp(key.revokedAt)),
        ])
    }

    /// `retailer offers import`.
    public static func offersImported(_ result: OfferImportResult) -> String {
        object([
            ("event", .string("offers_imported")), ("created", .int(result.created)),
            ("updated", .int(result.updated)), ("unchanged", .int(result.unchanged)),
        ])
    }

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

    /// `retailer offer rm --json`.
    public static func offerRemoved(major: UInt16, minor: UInt16) -> String {
        object([("event", .string("offer_removed")), ("major", .int(Int(major))), ("minor", .int(Int(minor)))])
    }

    /// `retailer store rm --json`.
    public static func storeRemoved(_ storeID: String) -> String {
        object([("event", .string("store_removed")), ("store_id", .string(storeID))])
    }

    /// `retailer till-key revoke --json`.
    public static func tillKeyRevoked(_ keyID: UUID) -> String {
        object([("event", .string("till_key_revoked")), ("id", .string(keyID.uuidString.lowercased()))])
    }

    /// `retailer rotate-key --json`: whether the new key is in the config file (else it was printed).
    public static func keyRotated(saved: Bool) -> String {
        object([("event", .string("key_rotated")), ("saved", .bool(saved))])
    }
}
