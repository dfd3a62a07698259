import Beacons
import Foundation
import Testing

/// `beacon simulate --walk` specs as typed: the beacons in order, or the message for the first refused.
@Suite struct WalkSpecsTests {
    let uuid = "8F0C1DDC-11E5-4A07-8910-425941B072F9"

    @Test func specsBecomeBeaconsInOrder() throws {
        let beacons = try BeaconWalk.beacons(
            parsing: ["\(uuid):1:2@0=12,10=1", "\(uuid):1:3@0=5"], measuredPower: -70)
        #expect(beacons.map(\.frame.identity.minor) == [2, 3])
        #expect(beacons.allSatisfy { $0.frame.measuredPower == -70 })
        // Written out, not parsed: each beacon's frame, an address of its own from its position, its waypoints.
        #expect(beacons[0] == beacon(minor: 2, address: 0, path: [(0, 12), (10, 1)]))
        #expect(beacons[1] == beacon(minor: 3, address: 1, path: [(0, 5)]))
    }

    private func beacon(minor: UInt16, address: UInt8, path: [(Double, Double)]) -> BeaconWalk.Beacon {
        BeaconWalk.Beacon(
            frame: BeaconFrame(
                kind: .iBeacon, identity: BeaconIdentity(uuid: UUID(uuidString: uuid)!, major: 1, minor: minor),
                measuredPower: -70),
            address: BluetoothAddress(wire: (address, 0, 0x4C, 0x59, 0x4F, 0xC0)),
            path: path.map { BeaconWalk.Waypoint(time: $0.0, distance: $0.1) })
    }

    @Test func theFirstBadSpecIsNamed() {
        #expect(throws: BeaconWalk.InputError.self) {
            try BeaconWalk.beacons(parsing: ["\(uuid):1:2@0=1", "nope", "\(uuid):1:2"], measuredPower: -59)
        }
        let error = #expect(throws: BeaconWalk.InputError.self) {
            try BeaconWalk.beacons(parsing: ["\(uuid):1:2@0=1", "nope"], measuredPower: -59)
        }
        #expect(
            error?.description
                == "'nope' is not a walk: use UUID:MAJOR:MINOR@SECONDS=METRES,... (or Eddystone's NAMESPACE:INSTANCE@..."
                + " or eid:IDENTITYKEY:K@...) with times increasing and distances > 0")
    }
}

/// Eddystone walks: UID and EID beacons parse, an EID walk's frames rotate, TLM takes every Nth advert.
@Suite struct EddystoneWalkTests {
    @Test func uidAndEIDSpecsParse() throws {
        let uid = try #require(BeaconWalk.Beacon(parsing: "EDD1EBEAC04E5DEFA017:010203040506@0=1", measuredPower: -59, index: 0))
        #expect(uid.frame.kind == .eddystoneUID && uid.frame.identity.eddystoneUID.description == "EDD1EBEAC04E5DEFA017:010203040506")
        var asked: (key: [UInt8], exponent: UInt8, seconds: Double)?
        let eid = try #require(
            BeaconWalk.Beacon(parsing: "eid:000102030405060708090a0b0c0d0e0f:3@0=1,9=2", measuredPower: -59, index: 1) { key, exponent, seconds in
                asked = (key, exponent, seconds)
                return EphemeralIDSchedule(exponent: exponent, startCounter: 0, ids: [EphemeralID(1), EphemeralID(2)])
            })
        #expect(eid.frame.kind == .eddystoneEID && eid.frame.identity.ephemeralID == EphemeralID(1))
        #expect(asked?.key == Array(0...15) && asked?.exponent == 3 && asked?.seconds == 9)
        #expect(BeaconWalk.Beacon(parsing: "eid:0001:3@0=1", measuredPower: -59, index: 1) == nil)
        #expect(BeaconWalk.Beacon(parsing: "eid:000102030405060708090a0b0c0d0e0f:16@0=1", measuredPower: -59, index: 1) == nil)
    }

    /// From counter 65280 with K = 8 over 300 s: the EIDs of 65280, 65536 (the temporary key's roll-over) and none after.
    @Test func scheduleCoversTheWalk() {
        #expect(EphemeralIDSchedule.counters(exponent: 8, startCounter: 65280, seconds: 300) == [65280, 65536])
        #expect(EphemeralIDSchedule.counters(exponent: 0, startCounter: UInt32.max, seconds: 1) == [UInt32.max, 0])
    }

    @Test func telemetryTakesEveryNthAdvertFromTheSameAddress() throws {
        let beacon = try #require(BeaconWalk.Beacon(parsing: "EDD1EBEAC04E5DEFA017:010203040506@0=1,1=1", measuredPower: -59, index: 0))
        let walk = BeaconWalk(beacons: [beacon], advertisingInterval: 0.1, rssiNoise: 0, telemetry: TelemetrySchedule(every: 3))
        let file = TemporaryFile()
        let writer = try BTSnoopWriter(path: file.path)
        try walk.write(to: writer)
        try writer.close()
        let capture = try AdvertisingCapture(path: file.path)
        var kinds: [BeaconKind] = []
        var batteries: [UInt16] = []
        while let sighting = try capture.nextSighting() {
            #expect(sighting.address == beacon.address)
            kinds.append(sighting.frame.kind)
            if case .plain(let telemetry) = sighting.telemetry { batteries.append(telemetry.batteryMillivolts) }
        }
        #expect(kinds.count == 11)
        #expect(kinds.enumerated().allSatisfy { ($0.offset + 1) % 3 == 0 ? $0.element == .eddystoneTelemetry : $0.element == .eddystoneUID })
        #expect(batteries == [3000, 3000, 3000], "600 mV an hour is 0.2 mV in a second")
    }
}
