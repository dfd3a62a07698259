import Beacons
import Foundation
import LoyaltyAPI
import Testing

@testable import LoyaltyClient

/// The shopper's bounds on interruptions as the presenter applies them: a muted retailer, quiet hours in the
/// device's zone (wrapping midnight), and caps per hour and per day; held offers are not seen, and show later.
@Suite struct ShopperAttentionTests {
    static let uuid = UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!
    static let matey = CatalogRetailer(id: UUID(), name: "Matey's", uuid: uuid)
    static let tucci = CatalogRetailer(id: UUID(), name: "Tucci's", uuid: UUID())
    /// 2027-01-15T08:00:00Z.
    static let epoch = Date(timeIntervalSince1970: 1_800_000_000)
    static let utc = TimeZone(identifier: "UTC")!

    static func offer(_ retailer: CatalogRetailer, _ minor: UInt16) -> ResolvedOffer {
        ResolvedOffer(
            offer: Offer(
                id: UUID(), retailerID: retailer.id, major: 1, minor: minor, title: "\(retailer.name) \(minor)",
                updatedAt: epoch),
            retailer: retailer)
    }

    /// Feeds a snapshot a second from `start` to `end` with `offers` near; returns the titles shown and when.
    static func play(
        _ presenter: inout OfferPresenter, _ offers: [ResolvedOffer], from start: Int = 0, to end: Int
    ) -> [(Int, String)] {
        let table = Dictionary(uniqueKeysWithValues: offers.map { ($0.identity, $0) })
        let beacons = offers.map { BeaconProximity(identity: $0.identity, proximity: .immediate) }
        var shown: [(Int, String)] = []
        for second in start...end {
            if let presentation = presenter.update(
                time: Double(second), serverTime: epoch.addingTimeInterval(Double(second)), beacons: beacons,
                resolve: { table[$0] })
            {
                shown.append((second, presentation.offer.offer.title))
            }
        }
        return shown
    }

    static func presenter(_ preferences: AccountPreferences, zone: TimeZone = utc) -> OfferPresenter {
        OfferPresenter(
            holding: .dwell(5), attention: ShopperAttention(preferences, timeZone: zone, serverTimeOffset: 0))
    }

    @Test func quietHoursWrapMidnightAndRefuseWhatIsNotARange() throws {
        let night = try QuietHours(parsing: "21:00-08:00")
        for (minute, inside) in [(21 * 60, true), (23 * 60 + 59, true), (0, true), (7 * 60 + 59, true), (8 * 60, false), (12 * 60, false)] {
            #expect(night.contains(minuteOfDay: minute) == inside, "\(minute)")
        }
        #expect(night.description == "21:00-08:00")
        let lunch = try QuietHours(parsing: "12:00-13:30")
        #expect(lunch.contains(minuteOfDay: 12 * 60 + 45) && !lunch.contains(minuteOfDay: 13 * 60 + 30))
        for (text, message) in [
            ("21-08", "'21-08' is not a range of two times: use HH:MM-HH:MM, e.g. 21:00-08:00"),
            ("21:00", "'21:00' is not a range of two times: use HH:MM-HH:MM, e.g. 21:00-08:00"),
            ("24:00-08:00", "'24:00-08:00' is not a range of two times: use HH:MM-HH:MM, e.g. 21:00-08:00"),
            ("21:60-08:00", "'21:60-08:00' is not a range of two times: use HH:MM-HH:MM, e.g. 21:00-08:00"),
            ("9:00-17:00", "'9:00-17:00' is not a range of two times: use HH:MM-HH:MM, e.g. 21:00-08:00"),
            ("21:00-08:00-09:00", "'21:00-08:00-09:00' is not a range of two times: use HH:MM-HH:MM, e.g. 21:00-08:00"),
            ("08:00-08:00", "'08:00-08:00' starts and ends at the same time: the range is empty"),
        ] {
            #expect(throws: ValidationError(field: "quiet_hours", message: message)) { try QuietHours(parsing: text) }
        }
    }

    @Test func anOfferNearInQuietHoursIsHeldAndShowsWhenTheyEnd() throws {
        // 07:59 to 08:01 UTC; the walk starts at 08:00:00.
        var presenter = Self.presenter(AccountPreferences(quietHours: "07:59-08:01"))
        let sushi = Self.offer(Self.matey, 1)
        #expect(Self.play(&presenter, [sushi], to: 90).map(\.0) == [60])
        #expect(presenter.held == [.quietHours: [sushi.offer.id]])
        // The same hours in Paris (UTC+1) are an hour earlier: nothing is held.
        var paris = Self.presenter(AccountPreferences(quietHours: "07:59-08:01"), zone: TimeZone(identifier: "Europe/Paris")!)
        #expect(Self.play(&paris, [sushi], to: 3).map(\.0) == [0])
        #expect(paris.held.isEmpty)
    }

    @Test func aMutedRetailersOffersAreHeldAndNeverSeen() {
        let sushi = Self.offer(Self.matey, 1)
        let pizza = Self.offer(Self.tucci, 2)
        var presenter = Self.presenter(AccountPreferences(mutedRetailers: [MutedRetailer(id: Self.tucci.id, name: "Tucci's")]))
        #expect(Self.play(&presenter, [pizza, sushi], to: 20).map(\.1) == ["Matey's 1"])
        #expect(presenter.held == [.muted: [pizza.offer.id]])
        #expect(presenter.seen[pizza.offer.id] == nil)
    }

    @Test func theCapsCountShowsOfEveryDeviceAndLiftAsTimePasses() {
        let offers = (1...3).map { Self.offer(Self.matey, UInt16($0)) }
        var presenter = Self.presenter(AccountPreferences(offersPerHour: 1, offersPerDay: 2))
        // Another device showed one an hour ago less a minute.
        presenter.noteSeen(UUID(), at: Self.epoch.addingTimeInterval(-3_540))
        #expect(Self.play(&presenter, offers, to: 30).isEmpty)
        #expect(presenter.held == [.hourlyCap: Set(offers.map(\.offer.id))])
        // The other device's show is an hour old: one shows, then the day's cap of two holds the rest, for hours.
        #expect(Self.play(&presenter, offers, from: 60, to: 100).map(\.0) == [60])
        #expect(presenter.held[.dailyCap] == Set(offers.dropFirst().map(\.offer.id)))
        #expect(Self.play(&presenter, offers, from: 3_700, to: 3_760).isEmpty)
        // A day after the first: the caps have lifted.
        #expect(Self.play(&presenter, offers, from: 86_400 + 3_700, to: 86_400 + 3_710).count == 1)
    }
}
