import Foundation

/// `PUT /v1/retailer/offers/{major}/{minor}`: the whole offer at that beacon (absent fields are cleared).
public struct OfferDraft: RequestBody, Equatable {
    public var title: String
    public var description: String?
    /// A free label such as "food" or "clothing"; clients colour offers by it.
    public var category: String?
    public var imageURL: String?
    public var startsAt: Date?
    public var endsAt: Date?
    /// Redemptions one shopper account may make; absent means 1.
    public var perShopperLimit: Int?
    /// Redemptions across all shoppers; absent means unlimited.
    public var totalLimit: Int?
    /// After this many seconds a shopper may be shown the offer again; absent means once only.
    public var reshowAfterSeconds: Int?
    /// The weekly hours it is on, in the store's time zone (`OfferSchedule`); absent means always.
    public var schedule: String?
    /// Times one shopper account may be shown it in a UTC day, on all its devices; absent means once ever.
    public var showsPerDay: Int?

    public init(
        title: String, description: String? = nil, category: String? = nil, imageURL: String? = nil,
        startsAt: Date? = nil, endsAt: Date? = nil, perShopperLimit: Int? = nil, totalLimit: Int? = nil,
        reshowAfterSeconds: Int? = nil, schedule: String? = nil, showsPerDay: Int? = nil
    ) {
        self.title = title
        self.description = description
        self.category = category
        self.imageURL = imageURL
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.perShopperLimit = perShopperLimit
        self.totalLimit = totalLimit
        self.reshowAfterSeconds = reshowAfterSeconds
        self.schedule = schedule
        self.showsPerDay = showsPerDay
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case title, description, category
        case imageURL = "image_url"
        case startsAt = "starts_at"
        case endsAt = "ends_at"
        case perShopperLimit = "per_shopper_limit"
        case totalLimit = "total_limit"
        case reshowAfterSeconds = "reshow_after_s"
        case schedule
        case showsPerDay = "shows_per_day"
    }

    public func validate() throws(ValidationError) {
        try Validation.text(title, field: "title", length: Validation.titleLength)
        try Validation.optionalText(description, field: "description", maxLength: Validation.descriptionMaxLength)
        try Validation.optionalText(category, field: "category", maxLength: Validation.categoryMaxLength)
        try Validation.imageURL(imageURL, field: "image_url")
        try Validation.window(startsAt: startsAt, endsAt: endsAt)
        try Validation.count(perShopperLimit, atLeast: 1, field: "per_shopper_limit")
        try Validation.count(totalLimit, atLeast: 1, field: "total_limit")
        try Validation.count(reshowAfterSeconds, atLeast: 0, field: "reshow_after_s")
        try Validation.optionalText(schedule, field: "schedule", maxLength: Validation.scheduleMaxLength)
        if let schedule { _ = try OfferSchedule(parsing: schedule) }
        if let showsPerDay, !Offer.showsPerDayRange.contains(showsPerDay) {
            throw ValidationError(
                field: "shows_per_day",
                message: "must be an integer from \(Offer.showsPerDayRange.lowerBound) to \(Offer.showsPerDayRange.upperBound) "
                    + "(shows a day per shopper); leave it out to show the offer once ever")
        }
    }
}

/// An offer as the server stores and serves it (retailer listing and catalog).
public struct Offer: Codable, Sendable, Equatable, Identifiable {
    public var id: UUID
    public var retailerID: UUID
    public var major: UInt16
    public var minor: UInt16
    public var title: String
    public var description: String?
    public var category: String?
    public var imageURL: String?
    public var startsAt: Date?
    public var endsAt: Date?
    public var perShopperLimit: Int
    public var totalLimit: Int?
    public var reshowAfterSeconds: Int?
    /// `OfferSchedule`'s text; nil: always on.
    public var schedule: String?
    /// Shows per shopper account per UTC day (`OfferDraft.showsPerDay`); nil: once ever.
    public var showsPerDay: Int?
    public var updatedAt: Date
    /// In the catalog, true when the offer's beacon is secure: it is seen and redeemed only after a verified
    /// sighting (docs/SECURE-BEACONS.md), so a client shows it only for a beacon the service resolved. Absent: false.
    public var presenceRequired: Bool?

    public init(
        id: UUID, retailerID: UUID, major: UInt16, minor: UInt16, title: String, description: String? = nil,
        category: String? = nil, imageURL: String? = nil, startsAt: Date? = nil, endsAt: Date? = nil,
        perShopperLimit: Int = 1, totalLimit: Int? = nil, reshowAfterSeconds: Int? = nil, schedule: String? = nil,
        showsPerDay: Int? = nil, updatedAt: Date, presenceRequired: Bool? = nil
    ) {
        self.id = id
        self.retailerID = retailerID
        self.major = major
        self.minor = minor
        self.title = title
        self.description = description
        self.category = category
        self.imageURL = imageURL
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.perShopperLimit = perShopperLimit
        self.totalLimit = totalLimit
        self.reshowAfterSeconds = reshowAfterSeconds
        self.schedule = schedule
        self.showsPerDay = showsPerDay
        self.updatedAt = updatedAt
        self.presenceRequired = presenceRequired
    }

    public enum CodingKeys: String, CodingKey {
        case id
        case retailerID = "retailer_id"
        case major, minor, title, description, category
        case imageURL = "image_url"
        case startsAt = "starts_at"
        case endsAt = "ends_at"
        case perShopperLimit = "per_shopper_limit"
        case totalLimit = "total_limit"
        case reshowAfterSeconds = "reshow_after_s"
        case schedule
        case showsPerDay = "shows_per_day"
        case updatedAt = "updated_at"
        case presenceRequired = "presence_required"
    }

    /// What `shows_per_day` may be: a daily deal shown at most a few times a day, never an unbounded stream.
    public static let showsPerDayRange = 1...100

    /// The UTC day of `date` (days since 1970-01-01): the day `shows_per_day` counts in, as the figures do.
    public static func showDay(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / 86_400).rounded(.down)) }

    /// Whether `date` lies in [starts_at, ends_at) and in the schedule's hours, if it has one (a schedule this
    /// machine cannot read, its zone unknown here, is taken as always on: the server still refuses out of hours).
    public func isValid(at date: Date) -> Bool {
        (startsAt.map { $0 <= date } ?? true) && (endsAt.map { date < $0 } ?? true)
            && (schedule.flatMap { try? OfferSchedule(parsing: $0) }?.contains(date) ?? true)
    }
}

/// `GET /v1/retailer/offers`.
public struct OfferList: Codable, Sendable, Equatable {
    public var offers: [Offer]
    /// With `limit`: the `after` of the next page, absent on the last.
    public var next: String?

    public init(offers: [Offer], next: String? = nil) {
        self.offers = offers
        self.next = next
    }
}

/// `POST /v1/retailer/offers/import`: what the file did. Rows equal to their offer change nothing.
public struct OfferImportResult: Codable, Sendable, Equatable {
    public var created: Int
    public var updated: Int
    public var unchanged: Int

    public init(created: Int, updated: Int, unchanged: Int) {
        self.created = created
        self.updated = updated
        self.unchanged = unchanged
    }
}
