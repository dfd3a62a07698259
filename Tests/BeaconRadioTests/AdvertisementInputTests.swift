import BeaconRadio
import Beacons
import Foundation
import Testing

/// `loyalty beacon advertise`'s values as typed: the beacon, or the message for the value refused.
@Suite struct AdvertisementInputTests {
    static let uuid = "8F0C1DDC-11E5-4A07-8910-425941B072F9"

    func problem(
        uuid: String? = uuid, major: String? = "1", minor: String? = "2", power: String? = nil, interval: String? = nil
    ) -> String? {
        do {
            _ = try BeaconAdvertisement(
                uuid: uuid, major: major, minor: minor, measuredPower: power, intervalMilliseconds: interval)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func givenValuesAndDefaultsMakeTheBeacon() throws {
        let advertisement = try BeaconAdvertisement(
            uuid: Self.uuid, major: "1", minor: "65535", measuredPower: nil, intervalMilliseconds: nil)
        #expect(advertisement.frame.identity == BeaconIdentity(uuid: UUID(uuidString: Self.uuid)!, major: 1, minor: 65535))
        #expect(advertisement.frame.measuredPower == -59)
        #expect(advertisement.intervalMilliseconds == 100)
        let tuned = try BeaconAdvertisement(
            uuid: Self.uuid, major: "0", minor: "0", measuredPower: "-70", intervalMilliseconds: "1000")
        #expect(tuned.frame.measuredPower == -70)
        #expect(tuned.intervalMilliseconds == 1000)
    }

    @Test func eachRefusedValueSaysWhichAndWhy() {
        #expect(problem(uuid: nil) == "--uuid UUID is required (the retailer's proximity UUID)")
        #expect(problem(uuid: "nope")?.hasPrefix("'nope' is not a UUID: use 32 hex digits") == true)
        #expect(problem(major: nil) == "--major is required (0...65535)")
        #expect(problem(minor: "65536") == "--minor must be a whole number 0...65535, got '65536'")
        #expect(problem(power: "1") == "--measured-power must be a whole number of dBm, -100...0, got '1'")
        #expect(problem(interval: "fast") == "--interval-ms must be a number of milliseconds, got 'fast'")
        #expect(problem(interval: "5")?.hasPrefix("--interval-ms: ") == true)
        #expect(problem() == nil)
    }
}
