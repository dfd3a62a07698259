import Beacons
import Foundation
import Testing

private let store = BeaconIdentityConstraint(uuid: matey)
private let food = BeaconIdentityConstraint(uuid: matey, major: 1)
private let sushi = BeaconIdentityConstraint(uuid: matey, major: 1, minor: 1)

private func monitor(_ regions: [BeaconRegion], exitTimeout: Double = 10) throws -> RegionMonitor {
    var monitor = try RegionMonitor(configuration: .init(exitTimeout: exitTimeout))
    for region in regions { monitor.add(region) }
    return monitor
}

@Suite struct RegionMonitorTests {
    @Test func entersOnTheFirstSightingAndExitsExactlyAtTheTimeout() throws {
        var monitor = try monitor([BeaconRegion(store)])
        #expect(monitor.state(for: store) == .unknown)
        #expect(monitor.observe(sighting(at: 50)) == [RegionEvent(kind: .enter, region: store, time: 50)])
        #expect(monitor.observe(sighting(at: 52.5)) == [])
        #expect(monitor.state(for: store) == .inside)
        #expect(monitor.advance(to: 62.499) == [])
        #expect(monitor.state(for: store) == .inside)
        #expect(monitor.advance(to: 62.5) == [RegionEvent(kind: .exit, region: store, time: 62.5)])
        #expect(monitor.state(for: store) == .outside)
        #expect(monitor.advance(to: 100) == [])
    }

    @Test func anExitIsStampedWithItsDeadlineEvenWhenNoticedLate() throws {
        var monitor = try monitor([BeaconRegion(store)])
        _ = monitor.observe(sighting(at: 1))
        let events = monitor.observe(sighting(minor: 2, at: 30))
        #expect(
            events == [
                RegionEvent(kind: .exit, region: store, time: 11), RegionEvent(kind: .enter, region: store, time: 30),
            ])
    }

    @Test func aSightingAtTheDeadlineComesAfterTheExit() throws {
        var monitor = try monitor([BeaconRegion(store)])
        _ = monitor.observe(sighting(at: 0))
        #expect(monitor.observe(sighting(at: 10)).map(\.kind) == [.exit, .enter])
    }

    @Test func noExitWhileABeaconKeepsChirping() throws {
        var monitor = try monitor([BeaconRegion(store)])
        var events: [RegionEvent] = []
        for second in 0...120 {
            events += monitor.observe(sighting(minor: UInt16(second % 3), at: Double(second) * 0.9))
        }
        #expect(events == [RegionEvent(kind: .enter, region: store, time: 0)])
        #expect(monitor.advance(to: 1000) == [RegionEvent(kind: .exit, region: store, time: 108 + 10)])
    }

    @Test func overlappingRegionsLiveIndependently() throws {
        var monitor = try monitor([BeaconRegion(store), BeaconRegion(food), BeaconRegion(sushi)])
        #expect(
            monitor.observe(sighting(major: 1, minor: 1, at: 0)) == [
                RegionEvent(kind: .enter, region: store, time: 0), RegionEvent(kind: .enter, region: food, time: 0),
                RegionEvent(kind: .enter, region: sushi, time: 0),
            ])
        // Only women's clothing is heard from now on: the store stays, food and sushi go.
        var events: [RegionEvent] = []
        for second in 1...20 { events += monitor.observe(sighting(major: 2, minor: 1, at: Double(second))) }
        #expect(
            events == [
                RegionEvent(kind: .exit, region: food, time: 10), RegionEvent(kind: .exit, region: sushi, time: 10),
            ])
        #expect(monitor.state(for: store) == .inside)
        #expect(monitor.state(for: food) == .outside)
        // Another major of the food department re-enters food but not sushi.
        #expect(
            monitor.observe(sighting(major: 1, minor: 2, at: 21)) == [RegionEvent(kind: .enter, region: food, time: 21)]
        )
        #expect(monitor.state(for: sushi) == .outside)
    }

    @Test func otherStoresDoNotMatch() throws {
        var monitor = try monitor([BeaconRegion(store)])
        #expect(monitor.observe(sighting(otherStore, at: 0)) == [])
        #expect(monitor.state(for: store) == .unknown)
        #expect(monitor.state(for: BeaconIdentityConstraint(uuid: otherStore)) == .unknown)
    }

    @Test func notifyFlagsChooseTheEventsNotTheState() throws {
        var monitor = try monitor([
            BeaconRegion(store, notifyOnEntry: false), BeaconRegion(food, notifyOnExit: false),
        ])
        #expect(monitor.observe(sighting(at: 0)) == [RegionEvent(kind: .enter, region: food, time: 0)])
        #expect(monitor.state(for: store) == .inside)
        #expect(monitor.advance(to: 10) == [RegionEvent(kind: .exit, region: store, time: 10)])
        #expect(monitor.state(for: food) == .outside)
        // Changing the flags of a monitored region keeps its state.
        monitor.add(BeaconRegion(food))
        #expect(monitor.state(for: food) == .outside)
        #expect(monitor.regions.map(\.constraint) == [store, food])
        #expect(monitor.regions.map(\.notifyOnEntry) == [false, true])
        #expect(monitor.regions.map(\.notifyOnExit) == [true, true])
    }

    @Test func unknownBecomesOutsideQuietlyAfterATimeoutWithoutBeacons() throws {
        var monitor = try monitor([BeaconRegion(store)])
        #expect(monitor.advance(to: 5) == [])
        #expect(monitor.state(for: store) == .unknown)
        #expect(monitor.advance(to: 14.9) == [])
        #expect(monitor.state(for: store) == .unknown)
        #expect(monitor.advance(to: 15) == [])
        #expect(monitor.state(for: store) == .outside)
        // A region added later waits its own timeout.
        monitor.add(BeaconRegion(food))
        #expect(monitor.state(for: food) == .unknown)
        _ = monitor.advance(to: 25)
        #expect(monitor.state(for: food) == .outside)
    }

    @Test func requestStateReportsTheCurrentStateAsAnEvent() throws {
        var monitor = try monitor([BeaconRegion(store), BeaconRegion(food)])
        #expect(
            monitor.requestState(for: store, at: 0) == [RegionEvent(kind: .state(.unknown), region: store, time: 0)])
        _ = monitor.observe(sighting(major: 2, at: 1))
        #expect(monitor.requestState(for: store, at: 2) == [RegionEvent(kind: .state(.inside), region: store, time: 2)])
        // Exits due on the way come first; food was never entered, so it turns outside silently.
        #expect(
            monitor.requestState(for: food, at: 20) == [
                RegionEvent(kind: .exit, region: store, time: 11),
                RegionEvent(kind: .state(.outside), region: food, time: 20),
            ])
        #expect(
            monitor.requestState(for: sushi, at: 21) == [RegionEvent(kind: .state(.unknown), region: sushi, time: 21)])
    }

    @Test func everyUUIDHeardIsMonitoredWhenAsked() throws {
        var automatic = try RegionMonitor(configuration: .init(monitorsEveryUUIDHeard: true))
        let other = BeaconIdentityConstraint(uuid: otherStore)
        #expect(automatic.observe(sighting(at: 0)) == [RegionEvent(kind: .enter, region: store, time: 0)])
        #expect(automatic.observe(sighting(otherStore, at: 1)) == [RegionEvent(kind: .enter, region: other, time: 1)])
        #expect(automatic.observe(sighting(major: 9, at: 2)) == [])
        #expect(automatic.regions.map(\.constraint) == [store, other])
        #expect(
            automatic.advance(to: 20) == [
                RegionEvent(kind: .exit, region: other, time: 11), RegionEvent(kind: .exit, region: store, time: 12),
            ])

        var manual = try RegionMonitor()
        #expect(manual.observe(sighting(at: 0)) == [])
        #expect(manual.regions.isEmpty)
    }

    /// UUIDs cost nothing to invent: one heard is forgotten once it exits, and no more than
    /// `maximumRegionsHeard` are monitored at once.
    @Test func uuidsHeardAreForgottenAtTheirExitAndBounded() throws {
        var automatic = try RegionMonitor(configuration: .init(monitorsEveryUUIDHeard: true, maximumRegionsHeard: 2))
        let other = BeaconIdentityConstraint(uuid: otherStore)
        let third = UUID(uuidString: "74278BDA-B644-4520-8F0C-720EAF059935")!
        #expect(automatic.observe(sighting(at: 0)) == [RegionEvent(kind: .enter, region: store, time: 0)])
        #expect(automatic.observe(sighting(otherStore, at: 1)) == [RegionEvent(kind: .enter, region: other, time: 1)])
        #expect(automatic.observe(sighting(third, at: 2)) == [])
        #expect(automatic.regions.map(\.constraint) == [store, other])
        #expect(automatic.advance(to: 10.5) == [RegionEvent(kind: .exit, region: store, time: 10)])
        #expect(automatic.regions.map(\.constraint) == [other])
        let thirdRegion = BeaconIdentityConstraint(uuid: third)
        #expect(automatic.observe(sighting(third, at: 11)) == [
            RegionEvent(kind: .exit, region: other, time: 11), RegionEvent(kind: .enter, region: thirdRegion, time: 11),
        ])
        #expect(automatic.observe(sighting(at: 12)) == [RegionEvent(kind: .enter, region: store, time: 12)])
        #expect(automatic.regions.map(\.constraint) == [thirdRegion, store])
    }

    /// Sightings that only keep a UUID's one region alive leave their time with the monitor until it matters:
    /// a region added to that UUID still enters on its next sighting.
    @Test func aRegionAddedToAUUIDInsideEntersOnItsNextSighting() throws {
        var monitor = try monitor([BeaconRegion(store)])
        _ = monitor.observe(sighting(at: 0))
        _ = monitor.observe(sighting(at: 1))
        monitor.add(BeaconRegion(food))
        #expect(monitor.observe(sighting(major: 1, at: 2)) == [RegionEvent(kind: .enter, region: food, time: 2)])
        #expect(
            monitor.advance(to: 100) == [
                RegionEvent(kind: .exit, region: store, time: 12), RegionEvent(kind: .exit, region: food, time: 12),
            ])
    }

    /// A removal that moves the group of the UUID last heard keeps that UUID's latest sighting.
    @Test func aRemovalKeepsTheLatestSightingOfTheGroupItMoves() throws {
        let other = BeaconIdentityConstraint(uuid: otherStore)
        var monitor = try monitor([BeaconRegion(store), BeaconRegion(other)])
        _ = monitor.observe(sighting(otherStore, at: 0))
        _ = monitor.observe(sighting(otherStore, at: 5))
        monitor.remove(store)
        #expect(monitor.advance(to: 100) == [RegionEvent(kind: .exit, region: other, time: 15)])
    }

    @Test func aRemovedRegionReportsNothing() throws {
        var monitor = try monitor([BeaconRegion(store), BeaconRegion(food)])
        _ = monitor.observe(sighting(at: 0))
        monitor.remove(store)
        #expect(monitor.advance(to: 30) == [RegionEvent(kind: .exit, region: food, time: 10)])
        #expect(monitor.state(for: store) == .unknown)
        #expect(monitor.regions.map(\.constraint) == [food])
    }

    /// The groups of UUIDs close up when one is removed: the others keep their regions, states and events.
    @Test func removingAUUIDsLastRegionLeavesTheOthersWhole() throws {
        let third = BeaconIdentityConstraint(uuid: UUID(uuidString: "74278BDA-B644-4520-8F0C-720EAF059935")!)
        let other = BeaconIdentityConstraint(uuid: otherStore)
        var monitor = try monitor([BeaconRegion(store), BeaconRegion(other), BeaconRegion(third)])
        _ = monitor.observe(sighting(at: 0))
        _ = monitor.observe(sighting(otherStore, at: 0))
        monitor.remove(store)
        #expect(monitor.regions.map(\.constraint) == [other, third])
        #expect(monitor.observe(sighting(third.uuid, at: 1)) == [RegionEvent(kind: .enter, region: third, time: 1)])
        #expect(monitor.observe(sighting(at: 2)) == [])
        #expect(monitor.state(for: store) == .unknown)
        #expect(monitor.state(for: other) == .inside)
        #expect(monitor.state(for: third) == .inside)
        var events: [RegionEvent] = []
        monitor.observe(sighting(otherStore, at: 5)) { events.append($0) }
        monitor.advance(to: 20) { events.append($0) }
        #expect(
            events == [
                RegionEvent(kind: .exit, region: third, time: 11), RegionEvent(kind: .exit, region: other, time: 15),
            ])
    }

    @Test func manyRegionsAndSimultaneousExitsInTheOrderAdded() throws {
        let regions = (0..<500).map { BeaconRegion(BeaconIdentityConstraint(uuid: matey, major: UInt16($0))) }
        var monitor = try monitor(regions.reversed())
        for region in regions { _ = monitor.observe(sighting(major: region.constraint.major!, at: 3)) }
        let exits = monitor.advance(to: 13)
        #expect(exits.count == 500)
        #expect(exits.map(\.region) == regions.reversed().map(\.constraint))
        #expect(exits.allSatisfy { $0.kind == .exit && $0.time == 13 })
    }

    @Test func aNegativeTimeoutIsRefused() {
        #expect(throws: InvalidBeaconConfiguration.self) { try RegionMonitor(configuration: .init(exitTimeout: -1)) }
        #expect(throws: InvalidBeaconConfiguration.self) {
            try RegionMonitor(configuration: .init(exitTimeout: .infinity))
        }
    }
}
