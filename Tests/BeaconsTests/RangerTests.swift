import Beacons
import Foundation
import Testing

let matey = UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!
let otherStore = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

func sighting(
    _ uuid: UUID = matey, major: UInt16 = 1, minor: UInt16 = 1, rssi: Int8 = -59, measuredPower: Int8 = -59,
    address: UInt8 = 1, at time: Double
) -> BeaconSighting {
    BeaconSighting(
        frame: BeaconFrame(
            kind: .iBeacon, identity: BeaconIdentity(uuid: uuid, major: major, minor: minor),
            measuredPower: measuredPower),
        address: BluetoothAddress(wire: (address, 0x3E, 0xA2, 0xC9, 0x6B, 0x6A)), rssi: rssi, time: time)
}

@Suite struct DistanceModelTests {
    @Test func logDistanceFromMeasuredPower() {
        let model = DistanceModel()
        #expect(model.distance(rssi: -59, measuredPower: -59) == 1)
        #expect(abs(model.distance(rssi: -79, measuredPower: -59)! - 10) < 1e-12)
        #expect(
            abs(DistanceModel(pathLossExponent: 4).distance(rssi: -79, measuredPower: -59)! - 10.0.squareRoot()) < 1e-12
        )
        #expect(model.distance(rssi: -59, measuredPower: 0) == nil, "uncalibrated beacon")
    }

    @Test func bucketsAtTheirLimits() {
        let model = DistanceModel()
        #expect(model.proximity(distance: 0.49) == .immediate)
        #expect(model.proximity(distance: 0.5) == .near)
        #expect(model.proximity(distance: 2.99) == .near)
        #expect(model.proximity(distance: 3) == .far)
        #expect(model.proximity(distance: nil) == .unknown)
    }
}

@Suite struct RangerTests {
    @Test func snapshotsFallOnceASecondOfTheSightingsClock() throws {
        var ranger = try Ranger()
        var snapshots: [RangingSnapshot] = []
        for index in 0..<35 {
            if let snapshot = ranger.observe(sighting(at: 100 + Double(index) / 10)) { snapshots.append(snapshot) }
        }
        #expect(snapshots.map(\.time) == [101, 102, 103])
        // The snapshot of tick 101 holds the readings before 101, the last one at 100.9.
        #expect(snapshots[0].beacons.map(\.lastSeen) == [100.9])
        #expect(ranger.advance(to: 103.99) == nil)
        #expect(ranger.advance(to: 104)?.time == 104)
    }

    @Test func aJumpOverSeveralTicksReportsOnlyTheLatest() throws {
        var ranger = try Ranger()
        _ = ranger.observe(sighting(at: 0))
        #expect(ranger.advance(to: 3.5)?.time == 3)
        #expect(ranger.advance(to: 3.9) == nil)
    }

    @Test func sortedNearestFirst() throws {
        var ranger = try Ranger()
        _ = ranger.observe(sighting(minor: 1, rssi: -75, at: 0))  // about 6.3 m: far
        _ = ranger.observe(sighting(minor: 2, rssi: -50, at: 0))  // about 0.35 m: immediate
        _ = ranger.observe(sighting(minor: 3, rssi: -65, at: 0))  // 2 m: near
        _ = ranger.observe(sighting(minor: 4, rssi: -68, at: 0))  // 2.8 m: near
        _ = ranger.observe(sighting(minor: 5, rssi: -59, measuredPower: 0, at: 0))  // uncalibrated
        let snapshot = ranger.snapshot(at: 0.5)
        #expect(snapshot.beacons.map(\.identity.minor) == [2, 3, 4, 1, 5])
        #expect(snapshot.beacons.map(\.proximity) == [.immediate, .near, .near, .far, .unknown])
        #expect(abs(snapshot.beacons[1].distance! - pow(10, 6.0 / 20)) < 1e-9)
        #expect(snapshot.beacons[4].distance == nil)
    }

    @Test func aRotatingAddressIsStillOneBeacon() throws {
        var ranger = try Ranger()
        for index in 0..<10 {
            _ = ranger.observe(sighting(rssi: -60, address: UInt8(index), at: Double(index) / 10))
        }
        let snapshot = ranger.snapshot(at: 1)
        #expect(snapshot.beacons.count == 1)
        #expect(ranger.trackedCount == 1)
        #expect(snapshot.beacons[0].address == sighting(address: 9, at: 0).address)
        #expect(snapshot.beacons[0].lastRSSI == -60)
        #expect(snapshot.beacons[0].measuredPower == -59)
    }

    @Test func silentBeaconsTurnUnknownThenAreDropped() throws {
        var ranger = try Ranger()
        for index in 0...20 { _ = ranger.observe(sighting(at: Double(index) / 10)) }  // heard until 2.0
        var byTick: [Double: [RangedBeacon]] = [:]
        for tick in 3...20 {
            let due = ranger.advance(to: Double(tick))
            let snapshot = try #require(due)
            byTick[snapshot.time] = snapshot.beacons
        }
        #expect(byTick[6]?.map(\.proximity) == [.near])  // 4 s of silence
        #expect(byTick[7]?.map(\.proximity) == [.unknown])  // 5 s: maxTrackingAge
        #expect(byTick[7]?.first?.distance == nil)
        #expect(byTick[11]?.map(\.proximity) == [.unknown])  // 9 s
        #expect(byTick[12]?.isEmpty == true)  // 10 s: dropped
        #expect(ranger.trackedCount == 0)
    }

    @Test func aBeaconHeardOnceBeforeALongGapIsReportedBeforeItIsDropped() throws {
        var ranger = try Ranger()
        _ = ranger.observe(sighting(minor: 1, at: 0.2))
        let dueAfterGap = ranger.observe(sighting(minor: 2, at: 100))
        let afterGap = try #require(dueAfterGap)
        #expect(afterGap.beacons.map(\.identity.minor) == [1])
        #expect(afterGap.beacons[0].proximity == .unknown)
        let dueNext = ranger.advance(to: 101)
        let next = try #require(dueNext)
        #expect(next.beacons.map(\.identity.minor) == [2])
    }

    @Test func theLastSnapshotHoldsBeaconsHeardSinceTheLastTick() throws {
        var ranger = try Ranger()
        _ = ranger.observe(sighting(minor: 1, at: 0))
        _ = ranger.observe(sighting(minor: 2, at: 0.5))
        #expect(ranger.snapshot(at: 0.5).beacons.count == 2)
    }

    @Test func readingsWithoutRSSIDoNotMoveTheFilter() throws {
        var ranger = try Ranger()
        _ = ranger.observe(sighting(rssi: -65, at: 0))
        _ = ranger.observe(sighting(rssi: 127, at: 0.1))
        let snapshot = ranger.snapshot(at: 0.2)
        let beacon = try #require(snapshot.beacons.first)
        #expect(beacon.rssi == -65)
        #expect(beacon.lastRSSI == 127)
        #expect(beacon.lastSeen == 0.1)
    }

    @Test func proximityOnAWalkInAndOut() throws {
        // 8 m to 0.3 m at 0.8 m/s, five seconds at the counter, back out: noisy RSSI at 10 Hz.
        let inbound = (8 - 0.3) / 0.8
        let path: (Double) -> Double = { t in
            if t < inbound { return 8 - 0.8 * t }
            if t < inbound + 5 { return 0.3 }
            return min(8, 0.3 + 0.8 * (t - inbound - 5))
        }
        var ranger = try Ranger()
        var proximities: [Proximity] = []
        for reading in syntheticTrace(seed: 7, duration: 30, noise: 3, start: 1000, distance: path) {
            let snapshot = ranger.observe(sighting(rssi: reading.rssi, at: reading.time))
            if let beacon = snapshot?.beacons.first { proximities.append(beacon.proximity) }
        }
        var phases: [Proximity] = []
        for proximity in proximities where phases.last != proximity { phases.append(proximity) }
        #expect(phases == [.far, .near, .immediate, .near, .far], "\(proximities)")
        #expect(proximities.count == 29)
    }

    @Test func invalidConfigurationsAreRefused() {
        #expect(throws: InvalidBeaconConfiguration.self) { try Ranger(configuration: .init(snapshotInterval: 0)) }
        #expect(throws: InvalidBeaconConfiguration.self) { try Ranger(configuration: .init(maxTrackingAge: .nan)) }
        #expect(throws: InvalidBeaconConfiguration.self) {
            try Ranger(configuration: .init(maxTrackingAge: 5, dropAfter: 4))
        }
        #expect(throws: InvalidBeaconConfiguration.self) {
            try Ranger(configuration: .init(filter: .runningAverage(window: 0)))
        }
        #expect(throws: InvalidBeaconConfiguration.self) {
            try Ranger(configuration: .init(distanceModel: DistanceModel(immediateLimit: 3, nearLimit: 1)))
        }
    }

    /// Each snapshot starts from the last one's order: beacons that change places, beacons forgotten in between
    /// (the others close up) and beacons new since all land where their proximity, distance and identity put
    /// them, as a sort from scratch would.
    @Test func snapshotsFollowBeaconsThatMoveComeAndGo() throws {
        var ranger = try Ranger(
            configuration: .init(maxTrackingAge: 1, dropAfter: 1, filter: .runningAverage(window: 1)))
        func hear(_ readings: [(minor: UInt16, rssi: Int8)], at time: Double) {
            for reading in readings { _ = ranger.observe(sighting(minor: reading.minor, rssi: reading.rssi, at: time)) }
        }
        func order(at time: Double) -> [UInt16] {
            let beacons = ranger.snapshot(at: time).beacons
            let expected = beacons.sorted {
                ($0.proximity, $0.distance ?? .infinity, $0.identity)
                    < ($1.proximity, $1.distance ?? .infinity, $1.identity)
            }
            #expect(beacons == expected)
            return beacons.map(\.identity.minor)
        }
        hear([(1, -50), (2, -60), (3, -70), (4, -80), (5, -90)], at: 0)
        #expect(order(at: 0.5) == [1, 2, 3, 4, 5])
        // The far ones come near, and two beacons at one level stand in the order of their identities.
        hear([(1, -90), (2, -80), (3, -70), (4, -60), (5, -60)], at: 0.6)
        #expect(order(at: 0.7) == [4, 5, 3, 2, 1])
        // 2 and 4 fall silent: lost, then forgotten while the others are heard; 6 and 7 are new.
        hear([(1, -90), (3, -70), (5, -60)], at: 1.2)
        #expect(order(at: 1.7) == [5, 3, 1, 2, 4])
        hear([(1, -55), (3, -75), (5, -65), (6, -40), (7, -95)], at: 2.5)
        #expect(order(at: 2.6) == [6, 1, 5, 3, 7])
        #expect(ranger.trackedCount == 5)
        // Everything lost: unknown, in the order of the identities.
        #expect(order(at: 4) == [1, 3, 5, 6, 7])
        #expect(order(at: 6) == [])
    }

    /// More beacons than the ranger's recent-track slots, heard in turn: each sighting still lands on its own
    /// beacon's track, whether found in its slot, in the slot beside it or through the dictionary.
    @Test func beaconsSharingRecentSlotsKeepTheirOwnTracks() throws {
        var ranger = try Ranger(configuration: .init(filter: .runningAverage(window: 1)))
        ranger.knownUUIDs = [matey]
        let beacons = 1_500
        func rssi(_ index: Int, _ round: Int) -> Int8 { Int8(-40 - (index * 7 + round * 13) % 60) }
        for round in 0..<4 {
            for index in 0..<beacons {
                let time = Double(round) * 0.2 + Double(index) * 1e-5
                _ = ranger.observe(
                    sighting(major: UInt16(index / 100), minor: UInt16(index), rssi: rssi(index, round), at: time))
            }
        }
        let snapshot = ranger.snapshot(at: 0.9)
        #expect(ranger.trackedCount == beacons && snapshot.beacons.count == beacons)
        for beacon in snapshot.beacons {
            let index = Int(beacon.identity.minor)
            #expect(beacon.identity.major == UInt16(index / 100))
            #expect(beacon.lastRSSI == rssi(index, 3) && beacon.rssi == Double(rssi(index, 3)))
        }
    }

    /// Made-up identities cannot grow the ranger without end: a UUID it is not told to look for holds at most
    /// `perUnknownUUID` beacons, such UUIDs together `unknownUUIDs`, every UUID together `total`; a beacon over a
    /// limit is tracked once others have been forgotten.
    @Test func trackingIsBoundedAndUnknownUUIDsAreHeldTighter() throws {
        var ranger = try Ranger(
            configuration: .init(
                maxTrackingAge: 1, dropAfter: 1, limits: .init(total: 6, unknownUUIDs: 3, perUnknownUUID: 2)))
        ranger.knownUUIDs = [matey]
        for minor in 1...3 { _ = ranger.observe(sighting(otherStore, minor: UInt16(minor), at: 0)) }
        #expect(ranger.trackedCount == 2)
        let third = UUID(uuidString: "74278BDA-B644-4520-8F0C-720EAF059935")!
        for minor in 1...2 { _ = ranger.observe(sighting(third, minor: UInt16(minor), at: 0)) }
        #expect(ranger.trackedCount == 3)
        for minor in 1...5 { _ = ranger.observe(sighting(matey, minor: UInt16(minor), at: 0)) }
        #expect(ranger.trackedCount == 6)
        let snapshot = ranger.snapshot(at: 0.5)
        #expect(Set(snapshot.beacons.map(\.identity.uuid)) == [otherStore, third, matey])
        #expect(snapshot.beacons.filter { $0.identity.uuid == matey }.count == 3)
        // Lost, then dropped: room again.
        _ = ranger.snapshot(at: 2)
        _ = ranger.snapshot(at: 4)
        #expect(ranger.trackedCount == 0)
        for minor in 1...3 { _ = ranger.observe(sighting(third, minor: UInt16(minor), at: 5)) }
        #expect(ranger.trackedCount == 2)
    }
}
