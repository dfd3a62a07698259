import Foundation
import LoyaltyAPI

/// Why an offer that could show was held back instead (issue 44): the shopper's own bounds on interruptions.
public enum HoldReason: String, Sendable, CaseIterable {
    /// Its retailer is muted: it stays held while the mute lasts.
    case muted
    /// The device's local time is inside the quiet hours: it shows when they end, if still near and valid.
    case quietHours = "quiet_hours"
    /// As many offers showed in the last 60 minutes as the account allows.
    case hourlyCap = "hourly_cap"
    /// As many offers showed in the last 24 hours as the account allows.
    case dailyCap = "daily_cap"

    /// How the scan's summary names it.
    public var words: String {
        switch self {
        case .muted: "muted"
        case .quietHours: "quiet hours"
        case .hourlyCap: "hourly cap"
        case .dailyCap: "daily cap"
        }
    }
}

/// The account's bounds on interruptions, applied by `OfferPresenter` as an offer is about to show. Pure: the time
/// zone and the device clock's offset from server time are given, so a replay and a test decide the same way.
public struct ShopperAttention: Sendable {
    public var mutedRetailers: Set<UUID>
    public var quietHours: QuietHours?
    /// Nil: no cap.
    public var offersPerHour: Int?
    public var offersPerDay: Int?
    /// Quiet hours are in this zone's local time (the device's).
    public var timeZone: TimeZone
    /// Server time minus device time, in seconds: quiet hours are read on the device's clock.
    public var serverTimeOffset: Double

    /// No bounds at all.
    public init() {
        mutedRetailers = []
        timeZone = .current
        serverTimeOffset = 0
    }

    /// The bounds of `preferences`; `AccountPreferences`' defaults before the first sync that fetched them.
    public init(_ preferences: AccountPreferences?, timeZone: TimeZone = .current, serverTimeOffset: Double) {
        let preferences = preferences ?? AccountPreferences()
        mutedRetailers = Set(preferences.mutedRetailers.map(\.id))
        quietHours = preferences.quietHours.flatMap { try? QuietHours(parsing: $0) }
        offersPerHour = preferences.offersPerHour
        offersPerDay = preferences.offersPerDay
        self.timeZone = timeZone
        self.serverTimeOffset = serverTimeOffset
    }

    /// Why `offer` may not show at `serverTime`, given when offers showed lately (server times, any order); nil
    /// when it may.
    public func holdReason(for offer: ResolvedOffer, at serverTime: Date, recentShows: some Collection<Date>)
        -> HoldReason?
    {
        if mutedRetailers.contains(offer.retailer.id) { return .muted }
        if let quietHours, quietHours.contains(minuteOfDay: minuteOfDay(serverTime)) { return .quietHours }
        if let offersPerDay, recentShows.count(where: { serverTime.timeIntervalSince($0) < 86_400 }) >= offersPerDay {
            return .dailyCap
        }
        if let offersPerHour, recentShows.count(where: { serverTime.timeIntervalSince($0) < 3_600 }) >= offersPerHour {
            return .hourlyCap
        }
        return nil
    }

    /// Minutes after midnight on the device's clock, in its zone.
    func minuteOfDay(_ serverTime: Date) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.hour, .minute], from: serverTime.addingTimeInterval(-serverTimeOffset))
        return (parts.hour ?? 0) * 60 + (parts.minute ?? 0)
    }
}
