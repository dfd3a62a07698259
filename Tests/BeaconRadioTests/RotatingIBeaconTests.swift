import BeaconRadio
import Beacons
import Foundation
import Testing

@Suite struct RotatingIBeaconTests {
    static let uuid = UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!

    /// A stand-in for the EID computation that shows which window (K = 2) a counter fell in, in its first 4 bytes.
    static func beacon(startCounter: Double) -> RotatingIBeacon {
        RotatingIBeacon(
            uuid: uuid, measuredPower: -59, timeCounter: EIDTimeCounter(exponent: 2, start: startCounter)
        ) { EphemeralID(UInt64($0 >> 2) << 32 | 0xFFFF_FFFF) }
    }

    /// Counter 6.5 at the start: the window of 4...7 until 1.5 s in, then 8...11 until 5.5 s; major and minor are
    /// the EID's first 4 bytes, big-endian, under the retailer's UUID.
    @Test func majorAndMinorTurnWithTheWindow() throws {
        let beacon = Self.beacon(startCounter: 6.5)
        let first = BeaconIdentity(uuid: Self.uuid, major: 0, minor: 1)
        let second = BeaconIdentity(uuid: Self.uuid, major: 0, minor: 2)
        #expect(beacon.frame(elapsed: 0).identity == first)
        #expect(beacon.frame(elapsed: 1.49).identity == first)
        #expect(beacon.frame(elapsed: 1.5).identity == second)
        #expect(beacon.frame(elapsed: 5.49).identity == second)
        #expect(beacon.frame(elapsed: 5.5).identity.minor == 3)
        #expect(beacon.frame(elapsed: 0).kind == .iBeacon && beacon.frame(elapsed: 0).measuredPower == -59)
        let wide = RotatingIBeacon(uuid: Self.uuid, measuredPower: -59, timeCounter: EIDTimeCounter(exponent: 0, start: 0)) {
            _ in EphemeralID(0x1234_5678_9ABC_DEF0)
        }
        #expect(wide.frame(elapsed: 0).identity == BeaconIdentity(uuid: Self.uuid, major: 0x1234, minor: 0x5678))
    }

    /// The advertiser replaces the data at each turn and only then: the commands of the controller's set, with the
    /// iBeacon of the new window.
    @Test func theDataIsReplacedAtEachTurn() throws {
        let advertisement = try BeaconAdvertisement(.rotatingIBeacon(Self.beacon(startCounter: 6.5)))
        #expect(advertisement.nextChange(after: 0) == 1.5)
        #expect(advertisement.nextChange(after: 1.5) == 5.5)
        for extended in [false, true] {
            let commands = try LEAdvertisingCommands(extended: extended, advertisement: advertisement)
            let changes = try commands.dataChanges(of: advertisement, within: 10)
            #expect(changes.map(\.elapsed) == [1.5, 5.5, 9.5])
            let second = AdvertisingData.beacon(
                BeaconFrame(kind: .iBeacon, identity: BeaconIdentity(uuid: Self.uuid, major: 0, minor: 2), measuredPower: -59))
            #expect(changes.first?.command == (try commands.replacingData(second)))
        }
    }
}
