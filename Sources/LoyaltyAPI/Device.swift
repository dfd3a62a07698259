import Foundation

/// `POST /v1/accounts` (no token; body optional): a new account and its first device.
public struct AccountRegistration: RequestBody, Equatable {
    public var name: String?

    public init(name: String? = nil) { self.name = name }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case name
    }

    public func validate() throws(ValidationError) {
        try Validation.optionalText(name, field: "name", maxLength: Validation.deviceNameMaxLength)
    }
}

/// `POST /v1/devices`: a link code spent on a new device of the code's account.
public struct DeviceRegistration: RequestBody, Equatable {
    /// Required: `POST /v1/link-codes` on a device of the account makes one.
    public var code: String?
    public var name: String?

    public init(code: String? = nil, name: String? = nil) {
        self.code = code
        self.name = name
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case code, name
    }

    public func validate() throws(ValidationError) {
        try Validation.optionalText(name, field: "name", maxLength: Validation.deviceNameMaxLength)
        // Typed or pasted by the shopper and never shown: spaces and a line break around it are ignored.
        try Validation.optionalText(code, field: "code", maxLength: 32, allowingLineBreaks: true)
    }
}

/// A device's credentials: the token is shown this once; the server keeps only its hash.
public struct DeviceCredentials: Codable, Sendable, Equatable {
    public var accountID: UUID
    public var deviceID: UUID
    public var deviceToken: String

    public init(accountID: UUID, deviceID: UUID, deviceToken: String) {
        self.accountID = accountID
        self.deviceID = deviceID
        self.deviceToken = deviceToken
    }

    public enum CodingKeys: String, CodingKey {
        case accountID = "account_id"
        case deviceID = "device_id"
        case deviceToken = "device_token"
    }
}

/// `POST /v1/link-codes`: a short single-use code another device of the shopper exchanges for a token.
public struct LinkCode: Codable, Sendable, Equatable {
    public var code: String
    public var expiresAt: Date

    public init(code: String, expiresAt: Date) {
        self.code = code
        self.expiresAt = expiresAt
    }

    public enum CodingKeys: String, CodingKey {
        case code
        case expiresAt = "expires_at"
    }
}

public struct Device: Codable, Sendable, Equatable, Identifiable {
    public var id: UUID
    public var name: String?
    public var createdAt: Date
    public var revokedAt: Date?
    /// True for the device whose token made the request.
    public var current: Bool

    public init(id: UUID, name: String?, createdAt: Date, revokedAt: Date?, current: Bool) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.current = current
    }

    public enum CodingKeys: String, CodingKey {
        case id, name
        case createdAt = "created_at"
        case revokedAt = "revoked_at"
        case current
    }
}

/// `GET /v1/devices`.
public struct DeviceList: Codable, Sendable, Equatable {
    public var devices: [Device]

    public init(devices: [Device]) { self.devices = devices }
}

/// An offer a device showed its shopper. The account's seen set is the union over its devices.
public struct SeenItem: Codable, Sendable, Hashable {
    public var offerID: UUID
    public var seenAt: Date

    public init(offerID: UUID, seenAt: Date) {
        self.offerID = offerID
        self.seenAt = seenAt
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case offerID = "offer_id"
        case seenAt = "seen_at"
    }
}

/// `POST /v1/seen`. Offers the server does not know are skipped; an item already in the set keeps its
/// first `seen_at`.
public struct SeenPush: RequestBody, Equatable {
    public var items: [SeenItem]

    public init(items: [SeenItem]) { self.items = items }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case items
    }

    public static var elementFieldNames: [String: Set<String>] {
        ["items": Set(SeenItem.CodingKeys.allCases.map(\.stringValue))]
    }

    public func validate() throws(ValidationError) {
        guard Validation.seenItemsPerPush.contains(items.count) else {
            throw ValidationError(
                field: "items",
                message:
                    "must hold \(Validation.seenItemsPerPush.lowerBound) to \(Validation.seenItemsPerPush.upperBound) items"
            )
        }
        for (index, item) in items.enumerated() {
            try Validation.timestamp(item.seenAt, field: "items[\(index)].seen_at")
        }
    }
}

/// The answer to `POST /v1/seen`: how many items were new to the account.
public struct SeenPushResult: Codable, Sendable, Equatable {
    public var added: Int

    public init(added: Int) { self.added = added }
}

/// `GET /v1/seen[?since=CURSOR]`: the items added to the account's set after the cursor.
public struct SeenPage: Codable, Sendable, Equatable {
    public var cursor: String
    public var items: [SeenItem]
    /// Today's and yesterday's show counts (UTC days) of the account's offers that have `shows_per_day`, whole at
    /// every fetch: what a device needs to hold a daily cap across the account's devices.
    public var dayShows: [DayShows]?

    public init(cursor: String, items: [SeenItem], dayShows: [DayShows]? = nil) {
        self.cursor = cursor
        self.items = items
        self.dayShows = dayShows
    }

    public enum CodingKeys: String, CodingKey {
        case cursor, items
        case dayShows = "day_shows"
    }
}

/// How many times the account was shown an offer on a UTC day (`Offer.showDay`), on all its devices.
public struct DayShows: Codable, Sendable, Hashable {
    public var offerID: UUID
    public var day: Int64
    public var shows: Int
    /// The latest of them (in the account export only).
    public var lastShownAt: Date?

    public init(offerID: UUID, day: Int64, shows: Int, lastShownAt: Date? = nil) {
        self.offerID = offerID
        self.day = day
        self.shows = shows
        self.lastShownAt = lastShownAt
    }

    public enum CodingKeys: String, CodingKey {
        case offerID = "offer_id"
        case day, shows
        case lastShownAt = "last_shown_at"
    }
}

/// `POST /v1/redemptions` with an `Idempotency-Key` header.
public struct RedemptionRequest: RequestBody, Equatable {
    public var offerID: UUID

    public init(offerID: UUID) { self.offerID = offerID }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case offerID = "offer_id"
    }

    public func validate() throws(ValidationError) {}
}

/// A redemption: the code the shopper shows at the till.
public struct Redemption: Codable, Sendable, Equatable, Identifiable {
    public var id: UUID
    public var offerID: UUID
    public var code: String
    public var redeemedAt: Date
    /// When a till accepted the code; absent until then.
    public var acceptedAt: Date?

    public init(id: UUID, offerID: UUID, code: String, redeemedAt: Date, acceptedAt: Date? = nil) {
        self.id = id
        self.offerID = offerID
        self.code = code
        self.redeemedAt = redeemedAt
        self.acceptedAt = acceptedAt
    }

    public enum CodingKeys: String, CodingKey {
        case id = "redemption_id"
        case offerID = "offer_id"
        case code
        case redeemedAt = "redeemed_at"
        case acceptedAt = "accepted_at"
    }
}

/// `GET /v1/redemptions`: the account's redemptions, newest first.
public struct RedemptionList: Codable, Sendable, Equatable {
    public var redemptions: [Redemption]

    public init(redemptions: [Redemption]) { self.redemptions = redemptions }
}
