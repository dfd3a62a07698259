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
                == "'nope' is not a walk: use UUID:MAJOR:MINOR@SECONDS=METRES,... with times increasing and distances > 0")
    }
}
