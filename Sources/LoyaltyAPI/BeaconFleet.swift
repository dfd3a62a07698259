import Foundation

/// `PUT /v1/retailer/fleet/{major}/{minor}`: what the retailer calls a beacon and where it hangs, so the fleet
/// reads "Sushi counter, above the till" rather than 1:1.
public struct BeaconLabel: RequestBody, Equatable {
    public var name: String
    public var placement: String?
    /// The store (its `store_id`) the beacon hangs in: a verified sighting of it puts the shopper there, which bounds
    /// how far the shopper's next verified sighting can be (docs/SECURE-BEACONS.md, "Impossible journeys").
    public var storeID: String?

    public init(name: String, placement: String? = nil, storeID: String? = nil) {
        self.name = name
        self.placement = placement
        self.storeID = storeID
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case name, placement
        case storeID = "store_id"
    }

    public func validate() throws(ValidationError) {
        try Validation.text(name, field: "name", length: Validation.beaconNameLength)
        try Validation.optionalText(placement, field: "placement", maxLength: Validation.beaconPlacementMaxLength)
        if let storeID { _ = try Validation.storeID(storeID) }
    }
}

/// A secure beacon's latest Eddystone-TLM, as a verified sighting of it carried it.
public struct BeaconTelemetry: Codable, Sendable, Equatable {
    /// Battery voltage, mV; absent when the beacon does not measure it.
    public var batteryMillivolts: Int?
    /// °C; absent when the beacon has no sensor.
    public var temperature: Double?
    public var advertisingCount: Int64?
    /// Time since the beacon's power-up or reboot.
    public var uptimeSeconds: Double?
    /// When the sighting that carried it was heard.
    public var heardAt: Date
    /// The battery is under `lowBatteryMillivolts`: change it soon.
    public var lowBattery: Bool

    /// 2.5 V: a 3 V lithium coin cell (CR2032, CR2477: most beacons') reads about 3.0 V for most of its life and
    /// falls quickly from about 2.6 V; under 2.5 V its beacon has days to weeks left, less in the cold.
    public static let lowBatteryMillivolts = 2_500

    public init(
        batteryMillivolts: Int?, temperature: Double?, advertisingCount: Int64?, uptimeSeconds: Double?, heardAt: Date
    ) {
        self.batteryMillivolts = batteryMillivolts
        self.temperature = temperature
        self.advertisingCount = advertisingCount
        self.uptimeSeconds = uptimeSeconds
        self.heardAt = heardAt
        lowBattery = batteryMillivolts.map { $0 < Self.lowBatteryMillivolts } ?? false
    }

    public enum CodingKeys: String, CodingKey {
        case temperature
        case batteryMillivolts = "battery_mv"
        case advertisingCount = "advertising_count"
        case uptimeSeconds = "uptime_seconds"
        case heardAt = "heard_at"
        case lowBattery = "low_battery"
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
    /// The store the beacon is placed in; absent when not placed.
    public var storeID: String?
    /// Made secure: its identity rotates and only the service resolves it; it is heard only by verified sightings.
    public var secure: Bool
    /// A secure beacon's latest Eddystone-TLM; absent when none was heard.
    public var telemetry: BeaconTelemetry?
    /// The live offer on the beacon; absent when there is none.
    public var offerID: UUID?
    public var title: String?
    public var category: String?
    /// The latest time an account was first shown any offer on this beacon (a secure beacon: the latest verified
    /// sighting of it; a claimed one does not count); absent when never.
    public var lastHeardAt: Date?
    /// The days of the period on which it was heard (a secure beacon: verified), oldest first; a day without
    /// sightings is left out, so a year of a fleet of thousands is not millions of zeros.
    public var sightings: [BeaconDay]
    /// Unheard for the quiet period, counted from the offer's (or the name's) last change when never heard.
    public var quiet: Bool
    /// Why the beacon is flagged and what to check, or what is odd about it (heard with no offer on it).
    public var note: String?

    public init(
        major: UInt16, minor: UInt16, name: String? = nil, placement: String? = nil, storeID: String? = nil,
        secure: Bool = false, telemetry: BeaconTelemetry? = nil, offerID: UUID? = nil, title: String? = nil,
        category: String? = nil, lastHeardAt: Date? = nil, sightings: [BeaconDay], quiet: Bool, note: String? = nil
    ) {
        self.major = major
        self.minor = minor
        self.name = name
        self.placement = placement
        self.storeID = storeID
        self.secure = secure
        self.telemetry = telemetry
        self.offerID = offerID
        self.title = title
        self.category = category
        self.lastHeardAt = lastHeardAt
        self.sightings = sightings
        self.quiet = quiet
        self.note = note
    }

    public enum CodingKeys: String, CodingKey {
        case major, minor, name, placement, secure, telemetry
        case storeID = "store_id"
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
