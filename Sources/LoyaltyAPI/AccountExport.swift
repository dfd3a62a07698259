import Foundation

/// `GET /v1/account/export`: what the service holds about the calling device's account, but for its two long lists
/// (the seen set and the verified sightings), which `GET /v1/account/export/seen` and `.../sightings` page through.
/// `loyalty account export` joins them into one document (docs/PRIVACY.md).
public struct AccountExport: Codable, Sendable, Equatable {
    public var exportedAt: Date
    public var accountID: UUID
    public var createdAt: Date
    /// Every device, revoked ones included: name, when linked, when revoked.
    public var devices: [Device]
    /// Link codes made and not yet purged (the code itself is kept only as a digest, so it is not here).
    public var linkCodes: [ExportedLinkCode]
    /// Every redemption with its till acceptance.
    public var redemptions: [ExportedRedemption]
    /// Muted retailers, quiet hours and caps (the defaults when the account never set its own).
    public var preferences: AccountPreferences
    public var seenCount: Int
    public var verifiedSightingCount: Int
    /// Shows counted per offer and UTC day, for offers with `shows_per_day`.
    public var dayShows: [DayShows]

    public init(
        exportedAt: Date, accountID: UUID, createdAt: Date, devices: [Device], linkCodes: [ExportedLinkCode],
        redemptions: [ExportedRedemption], preferences: AccountPreferences, seenCount: Int, verifiedSightingCount: Int,
        dayShows: [DayShows] = []
    ) {
        (self.exportedAt, self.accountID, self.createdAt, self.devices) = (exportedAt, accountID, createdAt, devices)
        (self.linkCodes, self.redemptions, self.preferences) = (linkCodes, redemptions, preferences)
        (self.seenCount, self.verifiedSightingCount, self.dayShows) = (seenCount, verifiedSightingCount, dayShows)
    }

    public enum CodingKeys: String, CodingKey {
        case exportedAt = "exported_at"
        case accountID = "account_id"
        case createdAt = "created_at"
        case devices
        case linkCodes = "link_codes"
        case redemptions
        case preferences
        case seenCount = "seen_count"
        case verifiedSightingCount = "verified_sighting_count"
        case dayShows = "day_shows"
    }
}

public struct ExportedLinkCode: Codable, Sendable, Equatable {
    /// The device that made it (nil: made before devices were recorded).
    public var deviceID: UUID?
    public var expiresAt: Date
    public var usedAt: Date?

    public init(deviceID: UUID?, expiresAt: Date, usedAt: Date?) {
        (self.deviceID, self.expiresAt, self.usedAt) = (deviceID, expiresAt, usedAt)
    }

    public enum CodingKeys: String, CodingKey {
        case deviceID = "device_id"
        case expiresAt = "expires_at"
        case usedAt = "used_at"
    }
}

/// A redemption, the offer it was for, and its acceptance at the till (the till's name as it was then).
public struct ExportedRedemption: Codable, Sendable, Equatable {
    public var id: UUID
    public var offer: ExportedOffer
    public var code: String
    public var redeemedAt: Date
    public var acceptedAt: Date?
    public var acceptedTill: String?

    public init(
        id: UUID, offer: ExportedOffer, code: String, redeemedAt: Date, acceptedAt: Date?, acceptedTill: String?
    ) {
        (self.id, self.offer, self.code, self.redeemedAt) = (id, offer, code, redeemedAt)
        (self.acceptedAt, self.acceptedTill) = (acceptedAt, acceptedTill)
    }

    public enum CodingKeys: String, CodingKey {
        case id, offer, code
        case redeemedAt = "redeemed_at"
        case acceptedAt = "accepted_at"
        case acceptedTill = "accepted_till"
    }
}

/// The offer a record is about: its retailer and beacon, and its title.
public struct ExportedOffer: Codable, Sendable, Equatable {
    public var id: UUID
    public var retailer: String
    public var major: Int
    public var minor: Int
    public var title: String

    public init(id: UUID, retailer: String, major: Int, minor: Int, title: String) {
        (self.id, self.retailer, self.major, self.minor, self.title) = (id, retailer, major, minor, title)
    }
}

/// An offer the account has seen, and when it was first seen (on any device).
public struct ExportedSeen: Codable, Sendable, Equatable {
    public var offer: ExportedOffer
    public var seenAt: Date

    public init(offer: ExportedOffer, seenAt: Date) { (self.offer, self.seenAt) = (offer, seenAt) }

    public enum CodingKeys: String, CodingKey {
        case offer
        case seenAt = "seen_at"
    }
}

/// A sighting of a secure beacon the service verified for the account: where (the retailer's beacon) and when.
public struct ExportedSighting: Codable, Sendable, Equatable {
    public var retailer: String
    public var major: Int
    public var minor: Int
    public var heardAt: Date

    public init(retailer: String, major: Int, minor: Int, heardAt: Date) {
        (self.retailer, self.major, self.minor, self.heardAt) = (retailer, major, minor, heardAt)
    }

    public enum CodingKeys: String, CodingKey {
        case retailer, major, minor
        case heardAt = "heard_at"
    }
}

/// A page of one of the export's long lists; `next` is the `after` of the following page, nil on the last.
public struct AccountExportPage<Item: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    public var items: [Item]
    public var next: String?

    public init(items: [Item], next: String?) { (self.items, self.next) = (items, next) }

    /// Rows of a page, at most (and by default).
    public static var maximumLimit: Int { 1000 }
}

/// `DELETE /v1/account`: what was deleted. The redemptions are kept without the account, for the retailers'
/// figures and limits; their unspent codes no longer work.
public struct AccountDeletion: Codable, Sendable, Equatable {
    public var devices: Int
    public var seen: Int
    public var verifiedSightings: Int
    public var linkCodes: Int
    public var redemptionsKeptAnonymously: Int

    public init(devices: Int, seen: Int, verifiedSightings: Int, linkCodes: Int, redemptionsKeptAnonymously: Int) {
        (self.devices, self.seen, self.verifiedSightings) = (devices, seen, verifiedSightings)
        (self.linkCodes, self.redemptionsKeptAnonymously) = (linkCodes, redemptionsKeptAnonymously)
    }

    public enum CodingKeys: String, CodingKey {
        case devices, seen
        case verifiedSightings = "verified_sightings"
        case linkCodes = "link_codes"
        case redemptionsKeptAnonymously = "redemptions_kept_anonymously"
    }
}
