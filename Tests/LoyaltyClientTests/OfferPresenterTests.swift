import Beacons
import Foundation
import LoyaltyAPI
import Testing

@testable import LoyaltyClient

/// Matey's, the README's worked example: sushi (1,1), pizza (1,2), ladies' clothing (2,1).
private struct Store {
    static let uuid = UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!
    static let retailer = CatalogRetailer(id: UUID(), name: "Matey's", uuid: uuid)
    static let epoch = Date(timeIntervalSince1970: 1_800_000_000)

    var offers: [BeaconIdentity: ResolvedOffer] = [:]

    init(_ specs: [(UInt16, UInt16, String)] = [(1, 1, "sushi"), (1, 2, "pizza"), (2, 1, "clothing")]) {
        for (major, minor, title) in specs { add(major, minor, title) }
    }

    @discardableResult
    mutating func add(
        _ major: UInt16, _ minor: UInt16, _ title: String, startsAt: Date? = nil, endsAt: Date? = nil,
        reshowAfter: Int? = nil, showsPerDay: Int? = nil
    ) -> ResolvedOffer {
        let offer = Offer(
            id: UUID(), retailerID: Store.retailer.id, major: major, minor: minor, title: title,
            startsAt: startsAt, endsAt: endsAt, reshowAfterSeconds: reshowAfter, showsPerDay: showsPerDay,
            updatedAt: Store.epoch)
        let resolved = ResolvedOffer(offer: offer, retailer: Store.retailer)
        offers[resolved.identity] = resolved
        return resolved
    }

    func offer(_ title: String) -> ResolvedOffer { offers.values.first { $0.offer.title == title }! }

    static func beacon(_ major: UInt16, _ minor: UInt16, _ proximity: Proximity) -> BeaconProximity {
        BeaconProximity(identity: BeaconIdentity(uuid: uuid, major: major, minor: minor), proximity: proximity)
    }
}

/// Feeds snapshots one per second from `start`; returns the titles shown with their times.
private func play(
    _ presenter: inout OfferPresenter, _ store: Store, _ snapshots: [[BeaconProximity]], start: Double = 0
) -> [(Double, String)] {
    var shown: [(Double, String)] = []
    for (index, beacons) in snapshots.enumerated() {
        let time = start + Double(index)
        let serverTime = Store.epoch.addingTimeInterval(time)
        if let presentation = presenter.update(
            time: time, serverTime: serverTime, beacons: beacons, resolve: { store.offers[$0] })
        {
            shown.append((presentation.time, presentation.offer.offer.title))
        }
    }
    return shown
}

@Suite struct OfferPresenterTests {
    @Test func showsOnlyWhenNearOrCloser() {
        let store = Store()
        var presenter = OfferPresenter(holding: .dwell(5))
        let far = Array(repeating: [Store.beacon(1, 1, .far)], count: 10)
        #expect(play(&presenter, store, far).isEmpty)
        let unknown = Array(repeating: [Store.beacon(1, 1, .unknown)], count: 3)
        #expect(play(&presenter, store, unknown, start: 10).isEmpty)
        let shown = play(&presenter, store, [[Store.beacon(1, 1, .near)]], start: 20)
        #expect(shown.map(\.1) == ["sushi"])
    }

    @Test func minimumProximityIsConfigurable() {
        let store = Store()
        var immediateOnly = OfferPresenter(minimumProximity: .immediate, holding: .dwell(5))
        #expect(play(&immediateOnly, store, [[Store.beacon(1, 1, .near)]]).isEmpty)
        #expect(play(&immediateOnly, store, [[Store.beacon(1, 1, .immediate)]], start: 1).map(\.1) == ["sushi"])

        var farIsEnough = OfferPresenter(minimumProximity: .far, holding: .dwell(5))
        #expect(play(&farIsEnough, store, [[Store.beacon(1, 2, .far)]]).map(\.1) == ["pizza"])
    }

    @Test func showsEachOfferOnceInTheOrderBeaconsCameNear() {
        let store = Store()
        var presenter = OfferPresenter(holding: .dwell(5))
        // All three near; clothing came near first, then sushi, then pizza. One every 5 s of dwell.
        var snapshots: [[BeaconProximity]] = [
            [Store.beacon(2, 1, .near), Store.beacon(1, 1, .far)],
            [Store.beacon(2, 1, .near), Store.beacon(1, 1, .near)],
            [Store.beacon(2, 1, .near), Store.beacon(1, 1, .near), Store.beacon(1, 2, .immediate)],
        ]
        let all = [Store.beacon(2, 1, .near), Store.beacon(1, 1, .near), Store.beacon(1, 2, .immediate)]
        snapshots += Array(repeating: all, count: 30)
        let shown = play(&presenter, store, snapshots)
        #expect(shown.map(\.1) == ["clothing", "sushi", "pizza"])
        #expect(shown.map(\.0) == [0, 5, 10])
    }

    @Test func neverTwoAtATimeUntilDismissed() {
        let store = Store()
        var presenter = OfferPresenter(holding: .untilDismissed)
        let both = Array(repeating: [Store.beacon(1, 1, .near), Store.beacon(1, 2, .near)], count: 20)
        #expect(play(&presenter, store, both).count == 1)
        #expect(presenter.current != nil)
        presenter.dismiss()
        let next = play(&presenter, store, [[Store.beacon(1, 1, .near), Store.beacon(1, 2, .near)]], start: 20)
        #expect(next.count == 1)
        presenter.dismiss()
        #expect(play(&presenter, store, both, start: 21).isEmpty)
    }

    /// Held until dismissed, what came near while an offer was on screen waits its turn, in the order it
    /// came, while its beacon stays near.
    @Test func offersThatCameNearWhileOneWasOnScreenShowInTurn() {
        let store = Store()
        var presenter = OfferPresenter(holding: .untilDismissed)
        let snapshots: [[BeaconProximity]] = [
            [Store.beacon(1, 1, .near)],  // sushi shows
            [Store.beacon(1, 1, .near), Store.beacon(2, 1, .near)],  // clothing comes near first
            [Store.beacon(1, 2, .immediate), Store.beacon(2, 1, .near)],  // then pizza; sushi leaves
        ]
        #expect(play(&presenter, store, snapshots).map(\.1) == ["sushi"])
        #expect(presenter.waiting.map(\.offer.title) == ["clothing", "pizza"])
        presenter.dismiss()
        let later = Store.epoch.addingTimeInterval(2)
        #expect(presenter.showWaiting(time: 2, serverTime: later)?.offer.offer.title == "clothing")
        #expect(presenter.showWaiting(time: 2, serverTime: later) == nil, "one at a time")
        presenter.dismiss()
        // The next snapshot shows the next in turn, before any beacon that came near after it.
        let next = [Store.beacon(1, 1, .near), Store.beacon(1, 2, .near), Store.beacon(2, 1, .near)]
        #expect(play(&presenter, store, [next], start: 3).map(\.1) == ["pizza"])
        presenter.dismiss()
        #expect(play(&presenter, store, [next], start: 4).isEmpty, "each once")
        #expect(presenter.waiting.isEmpty)
    }

    /// A waiting offer whose beacon is no longer near leaves the queue (a fast replay, or a shopper who read
    /// one offer while walking past the next): not shown and not seen, it shows when its beacon is near again.
    @Test func aWaitingOfferWhoseBeaconWentFarIsDroppedUntilItComesNearAgain() {
        let store = Store()
        var presenter = OfferPresenter(holding: .untilDismissed)
        let snapshots: [[BeaconProximity]] = [
            [Store.beacon(1, 1, .near)],  // sushi shows
            [Store.beacon(1, 1, .near), Store.beacon(1, 2, .near), Store.beacon(2, 1, .near)],  // pizza, clothing wait
            [Store.beacon(1, 1, .near), Store.beacon(1, 2, .far), Store.beacon(2, 1, .near)],  // pizza goes far
            [Store.beacon(1, 1, .near)],  // clothing is out of range
        ]
        #expect(play(&presenter, store, snapshots).map(\.1) == ["sushi"])
        #expect(presenter.waiting.isEmpty, "\(presenter.waiting.map(\.offer.title))")
        presenter.dismiss()
        #expect(presenter.showWaiting(time: 3, serverTime: Store.epoch.addingTimeInterval(3)) == nil)
        #expect(play(&presenter, store, [[Store.beacon(1, 2, .near)]], start: 4).map(\.1) == ["pizza"])
        presenter.dismiss()
        #expect(play(&presenter, store, [[Store.beacon(2, 1, .immediate)]], start: 5).map(\.1) == ["clothing"])
    }

    /// A waiting offer the account saw meanwhile (another device, another scan) is passed over.
    @Test func aWaitingOfferSeenMeanwhileIsPassedOver() {
        let store = Store()
        var presenter = OfferPresenter(holding: .untilDismissed)
        let snapshots = [[Store.beacon(1, 1, .near)], [Store.beacon(1, 1, .near), Store.beacon(1, 2, .near)]]
        _ = play(&presenter, store, snapshots)
        #expect(presenter.waiting.map(\.offer.title) == ["pizza"])
        presenter.noteSeen(store.offer("pizza").offer.id, at: Store.epoch.addingTimeInterval(1))
        presenter.dismiss()
        #expect(presenter.showWaiting(time: 2, serverTime: Store.epoch.addingTimeInterval(2)) == nil)
        #expect(presenter.waiting.isEmpty)
    }

    @Test func aBeaconThatLeavesBeforeItsTurnIsNotShown() {
        let store = Store()
        var presenter = OfferPresenter(holding: .dwell(5))
        // Sushi shows at t=0; pizza is near only at t=1...2, while sushi still dwells.
        let snapshots: [[BeaconProximity]] = [
            [Store.beacon(1, 1, .near)],
            [Store.beacon(1, 1, .near), Store.beacon(1, 2, .near)],
            [Store.beacon(1, 2, .near)],
            [Store.beacon(1, 2, .far)],
            [], [], [], [],
        ]
        #expect(play(&presenter, store, snapshots).map(\.1) == ["sushi"])
    }

    @Test func comingNearAgainRestartsTheQueuePosition() {
        let store = Store()
        var presenter = OfferPresenter(holding: .dwell(3))
        let snapshots: [[BeaconProximity]] = [
            [Store.beacon(2, 1, .near)],  // clothing shows at 0
            [Store.beacon(2, 1, .near), Store.beacon(1, 1, .near)],  // sushi near since 1
            [Store.beacon(1, 1, .far), Store.beacon(1, 2, .near)],  // sushi leaves; pizza near since 2
            [Store.beacon(1, 1, .near), Store.beacon(1, 2, .near)],  // sushi back, since 3 (after pizza)
            [Store.beacon(1, 1, .near), Store.beacon(1, 2, .near)],
            [Store.beacon(1, 1, .near), Store.beacon(1, 2, .near)],
            [Store.beacon(1, 1, .near), Store.beacon(1, 2, .near)],
            [Store.beacon(1, 1, .near), Store.beacon(1, 2, .near)],
            [Store.beacon(1, 1, .near), Store.beacon(1, 2, .near)],
        ]
        #expect(play(&presenter, store, snapshots).map(\.1) == ["clothing", "pizza", "sushi"])
    }

    @Test func offersSeenOnAnotherDeviceAreNotShown() {
        let store = Store()
        var presenter = OfferPresenter(
            holding: .dwell(5), seen: [store.offer("sushi").offer.id: Store.epoch.addingTimeInterval(-3600)])
        let shown = play(&presenter, store, Array(repeating: [Store.beacon(1, 1, .near)], count: 20))
        #expect(shown.isEmpty)
        presenter.noteSeen(store.offer("pizza").offer.id, at: Store.epoch)
        #expect(play(&presenter, store, [[Store.beacon(1, 2, .near)]], start: 20).isEmpty)
    }

    @Test func reshowAfterPassesInServerTime() {
        var store = Store([])
        store.add(1, 1, "sushi", reshowAfter: 10)
        var presenter = OfferPresenter(holding: .dwell(2))
        let near = Array(repeating: [Store.beacon(1, 1, .near)], count: 25)
        let shown = play(&presenter, store, near)
        #expect(shown.map(\.0) == [0, 10, 20])
        #expect(presenter.seen[store.offer("sushi").offer.id] == Store.epoch.addingTimeInterval(20))
    }

    @Test func showsPerDayShowsOncePerApproachUpToTheCapAndAgainTheNextDay() {
        var store = Store([])
        let lunch = store.add(1, 1, "lunch", showsPerDay: 2)
        var presenter = OfferPresenter(holding: .dwell(1))
        // Near for 3 s, gone for 3 s, three times: shown on the first two approaches only.
        let approach = Array(repeating: [Store.beacon(1, 1, .near)], count: 3) + Array(repeating: [], count: 3)
        #expect(play(&presenter, store, approach + approach + approach).map(\.0) == [0, 6])
        // The next UTC day (Store.epoch is 08:00 UTC), staying near: shown once, not once a second.
        let nextDay = 16 * 3600.0
        let staying = Array(repeating: [Store.beacon(1, 1, .near)], count: 10)
        #expect(play(&presenter, store, staying, start: nextDay).map(\.0) == [nextDay])
        // Another device's shows that day, learned at a sync, count too.
        var other = OfferPresenter(holding: .dwell(1), seen: [lunch.offer.id: Store.epoch])
        other.noteDayShows(DayShows(offerID: lunch.offer.id, day: Offer.showDay(Store.epoch), shows: 2))
        #expect(play(&other, store, approach).isEmpty)
        other.noteDayShows(DayShows(offerID: lunch.offer.id, day: Offer.showDay(Store.epoch), shows: 1))
        #expect(play(&other, store, approach, start: 10).isEmpty, "a smaller count does not undo a larger one")
    }

    @Test func validityWindowUsesServerTime() {
        var store = Store([])
        store.add(1, 1, "later", startsAt: Store.epoch.addingTimeInterval(5))
        store.add(1, 2, "over", endsAt: Store.epoch.addingTimeInterval(-1))
        store.add(2, 1, "until", endsAt: Store.epoch.addingTimeInterval(3))
        var presenter = OfferPresenter(holding: .dwell(0))
        let beacons = [Store.beacon(1, 1, .near), Store.beacon(1, 2, .near)]
        let shown = play(&presenter, store, Array(repeating: beacons, count: 8))
        #expect(shown.map(\.1) == ["later"])
        #expect(shown.map(\.0) == [5])
        // "until" ends at epoch+3: near from t=4 it is never shown.
        let late = play(&presenter, store, Array(repeating: [Store.beacon(2, 1, .near)], count: 3), start: 4)
        #expect(late.isEmpty)
    }

    @Test func unknownBeaconsAreIgnored() {
        let store = Store()
        var presenter = OfferPresenter(holding: .dwell(1))
        let stranger = BeaconProximity(
            identity: BeaconIdentity(uuid: UUID(), major: 1, minor: 1), proximity: .immediate)
        let shown = play(&presenter, store, [[stranger], [stranger, Store.beacon(1, 2, .near)]])
        #expect(shown.map(\.1) == ["pizza"])
        #expect(shown.map(\.0) == [1])
    }
}
