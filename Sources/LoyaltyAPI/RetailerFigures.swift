import Foundation

/// One offer's (or all offers') figures on one UTC day.
public struct DayFigures: Codable, Sendable, Equatable {
    /// `2026-12-01`
    public var date: String
    /// Shopper accounts that were first shown the offer that day.
    public var shown: Int
    /// Distinct accounts that were shown or redeemed it that day.
    public var uniqueShoppers: Int
    public var redeemed: Int
    /// Codes a till accepted that day.
    public var accepted: Int
    /// accepted / shown; absent when nothing was shown.
    public var conversion: Double?

    public init(date: String, shown: Int, uniqueShoppers: Int, redeemed: Int, accepted: Int) {
        self.date = date
        self.shown = shown
        self.uniqueShoppers = uniqueShoppers
        self.redeemed = redeemed
        self.accepted = accepted
        conversion = shown > 0 ? Double(accepted) / Double(shown) : nil
    }

    public enum CodingKeys: String, CodingKey {
        case date, shown
        case uniqueShoppers = "unique_shoppers"
        case redeemed, accepted, conversion
    }
}

public struct OfferFigures: Codable, Sendable, Equatable {
    public var offerID: UUID
    public var major: UInt16
    public var minor: UInt16
    public var title: String
    /// One entry per day of the period, oldest first.
    public var days: [DayFigures]

    public init(offerID: UUID, major: UInt16, minor: UInt16, title: String, days: [DayFigures]) {
        self.offerID = offerID
        self.major = major
        self.minor = minor
        self.title = title
        self.days = days
    }

    public enum CodingKeys: String, CodingKey {
        case offerID = "offer_id"
        case major, minor, title, days
    }
}

/// `GET /v1/retailer/figures?days=N`: the last N UTC days up to today, for all live offers together and for
/// each live offer that had any activity in them (quiet offers are left out: a chain has thousands).
public struct RetailerFigures: Codable, Sendable, Equatable {
    public var days: Int
    public var total: [DayFigures]
    public var offers: [OfferFigures]

    public init(days: Int, total: [DayFigures], offers: [OfferFigures]) {
        self.days = days
        self.total = total
        self.offers = offers
    }
}

/// A beacon (a live offer's major and minor) and when a shopper last heard it.
public struct BeaconHealth: Codable, Sendable, Equatable {
    public var offerID: UUID
    public var major: UInt16
    public var minor: UInt16
    public var title: String
    /// The latest time an account was first shown the beacon's offer; absent when never.
    public var lastHeardAt: Date?
    /// Unheard for the period asked (counted from the offer's last change when never heard): its battery
    /// may be flat, or it has been moved or covered.
    public var checkBattery: Bool

    public init(
        offerID: UUID, major: UInt16, minor: UInt16, title: String, lastHeardAt: Date?, checkBattery: Bool
    ) {
        self.offerID = offerID
        self.major = major
        self.minor = minor
        self.title = title
        self.lastHeardAt = lastHeardAt
        self.checkBattery = checkBattery
    }

    public enum CodingKeys: String, CodingKey {
        case offerID = "offer_id"
        case major, minor, title
        case lastHeardAt = "last_heard_at"
        case checkBattery = "check_battery"
    }
}

/// `GET /v1/retailer/beacons?quiet_days=N`: every live offer's beacon, the longest unheard first.
public struct BeaconHealthList: Codable, Sendable, Equatable {
    public var quietDays: Int
    public var beacons: [BeaconHealth]

    public init(quietDays: Int, beacons: [BeaconHealth]) {
        self.quietDays = quietDays
        self.beacons = beacons
    }

    public enum CodingKeys: String, CodingKey {
        case quietDays = "quiet_days"
        case beacons
    }
}

extension Validation {
    /// The periods figures and beacon health are asked for, in days.
    public static let figureDays = 1...366
}
