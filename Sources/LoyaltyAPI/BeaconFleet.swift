import Foundation

/// `PUT /v1/retailer/fleet/{major}/{minor}`: what the retailer calls a beacon and where it hangs, so the fleet
/// reads "Sushi counter, above the till" rather than 1:1.
public struct BeaconLabel: RequestBody, Equatable {
    public var name: String
    public var placement: String?

    public init(name: String, placement: String? = nil) {
        self.name = name
        self.placement = placement
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case name, placement
    }

    public func validate() throws(ValidationError) {
        try Validation.text(name, field: "name", length: Validation.beaconNameLength)
        try Validation.optionalText(placement, field: "placement", maxLength: Validation.beaconPlacementMaxLength)
    }
}

/// Shoppers who first heard a beacon (were first shown an offer on it) on one UTC day.
public struct BeaconDay: Codable, Sendable, Equatable {
    /// `2026-12-01`
    public var date: String
    public var sightings: Int

    public init(date: String, sightings: Int) {
        self.date = date
        self.sightings = sightings
    }
}

/// One beacon of the retailer's fleet: one with a live offer, one the retailer named, or one shoppers heard
/// while an offer was on it that has since been removed.
public struct FleetBeacon: Codable, Sendable, Equatable {
    public var major: UInt16
    public var minor: UInt16
    public var name: String?
    public var placement: String?
    /// The live offer on the beacon; absent when there is none.
    public var offerID: UUID?
    public var title: String?
    public var category: String?
    /// The latest time an account was first shown any offer on this beacon; absent when never.
    public var lastHeardAt: Date?
    /// The days of the period on which it was heard, oldest first; a day without sightings is left out, so a
    /// year of a fleet of thousands is not millions of zeros.
    public var sightings: [BeaconDay]
    /// Unheard for the quiet period, counted from the offer's (or the name's) last change when never heard.
    public var quiet: Bool
    /// Why the beacon is flagged and what to check, or what is odd about it (heard with no offer on it).
    public var note: String?

    public init(
        major: UInt16, minor: UInt16, name: String? = nil, placement: String? = nil, offerID: UUID? = nil,
        title: String? = nil, category: String? = nil, lastHeardAt: Date? = nil, sightings: [BeaconDay],
        quiet: Bool, note: String? = nil
    ) {
        self.major = major
        self.minor = minor
        self.name = name
        self.placement = placement
        self.offerID = offerID
        self.title = title
        self.category = category
        self.lastHeardAt = lastHeardAt
        self.sightings = sightings
        self.quiet = quiet
        self.note = note
    }

    public enum CodingKeys: String, CodingKey {
        case major, minor, name, placement
        case offerID = "offer_id"
        case title, category
        case lastHeardAt = "last_heard_at"
        case sightings, quiet, note
    }
}

/// `GET /v1/retailer/fleet?days=N&quiet_days=Q&limit=L&after=MAJOR.MINOR`: a page of the retailer's beacons, by
/// major and minor.
public struct BeaconFleet: Codable, Sendable, Equatable {
    public var days: Int
    /// The period's first UTC day (`2026-12-01`); its last is the server's today.
    public var firstDay: String
    public var quietDays: Int
    public var beacons: [FleetBeacon]
    /// The `after` of the next page (`MAJOR.MINOR`); absent on the last.
    public var next: String?

    public init(days: Int, firstDay: String, quietDays: Int, beacons: [FleetBeacon], next: String? = nil) {
        self.days = days
        self.firstDay = firstDay
        self.quietDays = quietDays
        self.beacons = beacons
        self.next = next
    }

    public enum CodingKeys: String, CodingKey {
        case days
        case firstDay = "first_day"
        case quietDays = "quiet_days"
        case beacons, next
    }
}

extension Validation {
    public static let beaconNameLength = 1...100
    public static let beaconPlacementMaxLength = 500
    /// Beacons in a fleet page: at 366 days heard every day, 500 of them are some 6 MB of JSON.
    public static let fleetPageLimit = 1...500
}
