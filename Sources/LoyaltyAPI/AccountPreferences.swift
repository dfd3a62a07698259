import Foundation

/// A daily range of the device's local time, `HH:MM-HH:MM`, in which no offer shows. The end is not part of it;
/// an end before the start wraps midnight (`21:00-08:00` is the night).
public struct QuietHours: Sendable, Hashable, CustomStringConvertible {
    /// Minutes after local midnight, 0..<1440.
    public var start: Int
    public var end: Int

    public init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }

    /// `21:00-08:00`: two 24-hour times; the same time twice is an empty range and refused.
    public init(parsing text: String, field: String = "quiet_hours") throws(ValidationError) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let start = Self.minutes(parts[0]), let end = Self.minutes(parts[1]) else {
            throw ValidationError(
                field: field, message: "'\(text)' is not a range of two times: use HH:MM-HH:MM, e.g. 21:00-08:00")
        }
        guard start != end else {
            throw ValidationError(field: field, message: "'\(text)' starts and ends at the same time: the range is empty")
        }
        self.init(start: start, end: end)
    }

    /// `HH:MM`, 00:00 to 23:59, as minutes after midnight.
    private static func minutes(_ text: Substring) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) }),
            let hours = Int(parts[0]), let minutes = Int(parts[1]), (0...23).contains(hours), (0...59).contains(minutes)
        else { return nil }
        return hours * 60 + minutes
    }

    /// Whether `minute` (after local midnight) falls in the range.
    public func contains(minuteOfDay minute: Int) -> Bool {
        start < end ? (start <= minute && minute < end) : (minute >= start || minute < end)
    }

    public var description: String {
        func clock(_ minutes: Int) -> String {
            let hours = minutes / 60, rest = minutes % 60
            return (hours < 10 ? "0" : "") + "\(hours):" + (rest < 10 ? "0" : "") + "\(rest)"
        }
        return "\(clock(start))-\(clock(end))"
    }
}

/// A retailer the account has muted: none of its offers shows.
public struct MutedRetailer: Codable, Sendable, Equatable {
    public var id: UUID
    public var name: String

    public init(id: UUID, name: String) {
        self.id = id
        self.name = name
    }
}

/// `GET /v1/preferences`: how the account bounds its offers, the same on every device of it.
public struct AccountPreferences: Codable, Sendable, Equatable {
    /// When the account never set its own: a walk through a mall full of beacons shows at most this many.
    public static let defaultOffersPerHour = 20
    public static let defaultOffersPerDay = 50

    public var mutedRetailers: [MutedRetailer]
    /// `HH:MM-HH:MM` (`QuietHours`), or nil for none.
    public var quietHours: String?
    /// At most this many offers show in any 60 minutes, and in any 24 hours, across all retailers.
    public var offersPerHour: Int
    public var offersPerDay: Int

    public init(
        mutedRetailers: [MutedRetailer] = [], quietHours: String? = nil,
        offersPerHour: Int = defaultOffersPerHour, offersPerDay: Int = defaultOffersPerDay
    ) {
        self.mutedRetailers = mutedRetailers
        self.quietHours = quietHours
        self.offersPerHour = offersPerHour
        self.offersPerDay = offersPerDay
    }

    public enum CodingKeys: String, CodingKey {
        case mutedRetailers = "muted_retailers"
        case quietHours = "quiet_hours"
        case offersPerHour = "offers_per_hour"
        case offersPerDay = "offers_per_day"
    }

    /// The settings a device may change with `PUT /v1/preferences`.
    public var settings: PreferenceSettings {
        PreferenceSettings(quietHours: quietHours, offersPerHour: offersPerHour, offersPerDay: offersPerDay)
    }
}

/// `PUT /v1/preferences`: the account's quiet hours and caps, all at once (muting has routes of its own, so that
/// two devices muting at once both count).
public struct PreferenceSettings: RequestBody, Equatable {
    public var quietHours: String?
    public var offersPerHour: Int
    public var offersPerDay: Int

    /// A cap of 0 shows nothing; more than this is no cap at all.
    public static let capRange = 0...10_000

    public init(quietHours: String?, offersPerHour: Int, offersPerDay: Int) {
        self.quietHours = quietHours
        self.offersPerHour = offersPerHour
        self.offersPerDay = offersPerDay
    }

    public enum CodingKeys: String, CodingKey, CaseIterable {
        case quietHours = "quiet_hours"
        case offersPerHour = "offers_per_hour"
        case offersPerDay = "offers_per_day"
    }

    public func validate() throws(ValidationError) {
        if let quietHours { _ = try QuietHours(parsing: quietHours) }
        for (value, field) in [(offersPerHour, "offers_per_hour"), (offersPerDay, "offers_per_day")]
        where !Self.capRange.contains(value) {
            throw ValidationError(
                field: field, message: "must be a whole number from \(Self.capRange.lowerBound) to \(Self.capRange.upperBound)")
        }
    }
}
