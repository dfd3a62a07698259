import Foundation
import LoyaltyAPI
import LoyaltyClient

/// The JSON lines of the retailer's and the till's commands.
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

    /// `till check` and `till accept`.
    public static func tillCode(_ code: TillCode, accepted: Bool) -> String {
        object([
            ("event", .string(accepted ? "code_accepted" : "code_checked")), ("code", .string(code.code)),
            ("status", .string(code.status.rawValue)), ("offer_id", id(code.offerID)),
            ("major", .int(Int(code.major))), ("minor", .int(Int(code.minor))), ("title", .string(code.title)),
            ("redeemed_at", timestamp(code.redeemedAt)), ("accepted_at", timestamp(code.acceptedAt)),
            ("accepted_till", optional(code.acceptedTill)),
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
}
