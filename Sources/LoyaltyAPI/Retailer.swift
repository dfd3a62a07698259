import Foundation

/// `POST /v1/retailers` (operator token).
public struct RetailerRegistration: RequestBody, Equatable {
    public var name: String
    /// A proximity UUID the retailer's beacons already broadcast; the server assigns one when absent.
    public var uuid: UUID?

    public init(name: String, uuid: UUID? = nil) {
        self.name = name
        self.uuid = uuid
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case name, uuid
    }

    public func validate() throws(ValidationError) {
        try Validation.text(name, field: "name", length: Validation.nameLength)
        // Spaces and invisible characters (zero-width spaces and joiners, marks) alone show as no name at all.
        guard name.unicodeScalars.contains(where: { !Self.isInvisible($0) }) else {
            throw ValidationError(field: "name", message: "must have a visible character, not only spaces or invisible ones")
        }
        // Shown as a space, yet no space: "Matey's\u{2800}Emporium" would read as "Matey's Emporium" and compare
        // otherwise.
        if let blank = name.unicodeScalars.first(where: Self.isBlankLookAlike) {
            throw ValidationError(
                field: "name",
                message: "must not hold U+\(String(blank.value, radix: 16, uppercase: true)), which shows as a blank "
                    + "but is no space; use a space")
        }
        // The all-zero UUID is what unset or broken beacons broadcast: no retailer's region.
        if uuid == UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) {
            throw ValidationError(field: "uuid", message: "must not be the all-zero UUID; omit uuid to be assigned one")
        }
    }
}

extension RetailerRegistration {
    /// White space, or a format character or one a renderer ignores (U+200B, U+200D, U+FEFF, U+00AD...).
    /// The braille blank and the Hangul fillers: drawn as an empty cell, neither white space nor (the braille
    /// blank) ignorable.
    static func isBlankLookAlike(_ scalar: Unicode.Scalar) -> Bool {
        [0x115F, 0x1160, 0x2800, 0x3164, 0xFFA0].contains(scalar.value)
    }

    public static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isWhitespace || scalar.properties.generalCategory == .format
            || scalar.properties.isDefaultIgnorableCodePoint
    }
}

/// `201` to a registration: the API key is shown this once; the server keeps only its hash.
public struct RetailerCredentials: Codable, Sendable, Equatable {
    public var id: UUID
    public var name: String
    public var uuid: UUID
    public var apiKey: String

    public init(id: UUID, name: String, uuid: UUID, apiKey: String) {
        self.id = id
        self.name = name
        self.uuid = uuid
        self.apiKey = apiKey
    }

    public enum CodingKeys: String, CodingKey {
        case id, name, uuid
        case apiKey = "api_key"
    }
}

/// `GET /v1/retailer`.
public struct Retailer: Codable, Sendable, Equatable {
    public var id: UUID
    public var name: String
    public var uuid: UUID
    public var createdAt: Date

    public init(id: UUID, name: String, uuid: UUID, createdAt: Date) {
        self.id = id
        self.name = name
        self.uuid = uuid
        self.createdAt = createdAt
    }

    public enum CodingKeys: String, CodingKey {
        case id, name, uuid
        case createdAt = "created_at"
    }
}

/// `POST /v1/retailer/key`: the new key; the old one keeps reading and syncing until the new one is first used,
/// or until `previousKeyExpiresAt` (24 h), and can no longer rotate, sign in to the console or make till keys.
public struct APIKey: Codable, Sendable, Equatable {
    public var apiKey: String
    public var previousKeyExpiresAt: Date?

    public init(apiKey: String, previousKeyExpiresAt: Date? = nil) {
        self.apiKey = apiKey
        self.previousKeyExpiresAt = previousKeyExpiresAt
    }

    public enum CodingKeys: String, CodingKey {
        case apiKey = "api_key"
        case previousKeyExpiresAt = "previous_key_expires_at"
    }
}

/// `GET /v1/retailer/stats`: one entry per live offer.
public struct OfferStatistics: Codable, Sendable, Equatable {
    public var offerID: UUID
    public var major: UInt16
    public var minor: UInt16
    public var title: String
    /// Distinct shopper accounts that reported the offer as seen.
    public var seenBy: Int
    /// Of `seenBy`, the accounts whose seen push a verified sighting of the beacon backs (within
    /// `presenceWindow` of it): presence the service checked. Only a secure beacon's offers have any.
    public var verifiedBy: Int
    /// Of `seenBy`, the accounts whose seen push no verified sighting backs: presence the device claimed.
    public var claimedBy: Int
    public var redemptions: Int
    /// Redemptions whose code a till accepted.
    public var accepted: Int
    /// `total_limit - redemptions`; absent when the offer has no total limit.
    public var remaining: Int?

    public init(
        offerID: UUID, major: UInt16, minor: UInt16, title: String, seenBy: Int, verifiedBy: Int = 0,
        redemptions: Int, accepted: Int = 0, remaining: Int?
    ) {
        self.offerID = offerID
        self.major = major
        self.minor = minor
        self.title = title
        self.seenBy = seenBy
        self.verifiedBy = verifiedBy
        claimedBy = seenBy - verifiedBy
        self.redemptions = redemptions
        self.accepted = accepted
        self.remaining = remaining
    }

    public enum CodingKeys: String, CodingKey {
        case offerID = "offer_id"
        case major, minor, title
        case seenBy = "seen_by"
        case verifiedBy = "verified_by"
        case claimedBy = "claimed_by"
        case redemptions, accepted, remaining
    }
}

public struct RetailerStatistics: Codable, Sendable, Equatable {
    public var offers: [OfferStatistics]

    public init(offers: [OfferStatistics]) { self.offers = offers }
}
