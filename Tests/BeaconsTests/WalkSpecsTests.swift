import Beacons
import Testing

/// `beacon simulate --walk` specs as typed: the beacons in order, or the message for the first refused.
@Suite struct WalkSpecsTests {
    let uuid = "8F0C1DDC-11E5-4A07-8910-425941B072F9"

    @Test func specsBecomeBeaconsInOrder() throws {
        let beacons = try BeaconWalk.beacons(
            parsing: ["\(uuid):1:2@0=12,10=1", "\(uuid):1:3@0=5"], measuredPower: -70)
        #expect(beacons.map(\.frame.identity.minor) == [2, 3])
        #expect(beacons.allSatisfy { $0.frame.measuredPower == -70 })
        #expect(beacons[0] == BeaconWalk.Beacon(parsing: "\(uuid):1:2@0=12,10=1", measuredPower: -70, index: 0))
        #expect(beacons[1] == BeaconWalk.Beacon(parsing: "\(uuid):1:3@0=5", measuredPower: -70, index: 1))
    }

    @Test func theFirstBadSpecIsNamed() {
        #expect(throws: BeaconWalk.InputError.self) {
            try BeaconWalk.beacons(parsing: ["\(uuid):1:2@0=1", "nope", "\(uuid):1:2"], measuredPower: -59)
        }
        do {
            _ = try BeaconWalk.beacons(parsing: ["\(uuid):1:2@0=1", "nope"], measuredPower: -59)
        } catch {
            #expect(
                error.description
                    == "'nope' is not a walk: use UUID:MAJOR:MINOR@SECONDS=METRES,... with times increasing and distances > 0")
        }
    }
}
