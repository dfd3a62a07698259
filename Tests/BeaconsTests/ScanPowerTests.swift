import Beacons
import Foundation
import Testing

@Suite struct ScanPowerTests {
    /// Android's scan modes: LOW_POWER listens 140 ms of 1,400 ms, BALANCED 183 of 730; the profiles match them
    /// within the 0.625 ms units of the HCI command.
    @Test func dutyCyclesAreAndroidsLowPowerAndBalanced() {
        #expect(ScanPower.high.dutyCycle == 1)
        #expect(abs(ScanPower.balanced.windowSeconds - 0.183) < 0.001 && abs(ScanPower.balanced.intervalSeconds - 0.730) < 1e-9)
        #expect(ScanPower.balanced.dutyCycle <= 0.25)
        #expect(abs(ScanPower.low.windowSeconds - 0.140) < 1e-9 && abs(ScanPower.low.intervalSeconds - 1.400) < 1e-9)
        #expect(ScanPower.low.dutyCycle <= 0.10)
    }

    /// The exit timeout of a duty-cycled profile is the fewest whole scan intervals in which a beacon advertising
    /// once a second (heard by a window with probability window/1 s) is missed every time with probability at
    /// most 0.1 %: one interval fewer would exceed it.
    @Test(arguments: [ScanPower.balanced, .low])
    func exitTimeoutsHearASlowBeaconWithProbabilityOfAtLeast999PerMille(power: ScanPower) {
        let missedPerWindow = 1 - power.windowSeconds
        func missed(in seconds: Double) -> Double {
            pow(missedPerWindow, (seconds / power.intervalSeconds).rounded())
        }
        #expect(missed(in: power.minimumExitTimeout) <= 0.001)
        #expect(missed(in: power.minimumExitTimeout - power.intervalSeconds) > 0.001)
        #expect(missed(in: power.minimumTrackingAge) <= 0.1)
        #expect(power.minimumExitTimeout > 10, "longer than the default exit timeout")
        #expect(ScanPower.high.minimumExitTimeout == 0 && ScanPower.high.minimumTrackingAge == 0)
    }

    /// Entry within the targets for a beacon advertising every 100 ms (each window hears it): low within
    /// 10 s, balanced within 3 s.
    @Test func entryLatencyForABeaconAdvertisingEvery100Milliseconds() {
        #expect(abs(ScanPower.low.entryLatency(advertisingInterval: 0.1) - 1.36) < 1e-9)
        #expect(abs(ScanPower.balanced.entryLatency(advertisingInterval: 0.1) - 0.6475) < 1e-9)
        // A beacon once a second: each 140 ms window hears it with probability 0.14, so about 10 s on average.
        #expect(abs(ScanPower.low.entryLatency(advertisingInterval: 1) - 10) < 1e-9)
    }
}

@Suite struct RangerResumeTests {
    /// After a resume the beacon heard before the sleep shows unknown although its tracking age has not run out;
    /// heard again, it shows from the new readings alone.
    @Test func aBeaconFromBeforeTheSleepIsUnknownUntilHeardAgain() throws {
        var ranger = try Ranger()
        for tenth in 0...20 { _ = ranger.observe(sighting(rssi: -59, at: 100 + Double(tenth) / 10)) }
        #expect(ranger.snapshot(at: 102.5).beacons.map(\.proximity) == [.near])
        ranger.resume()
        #expect(ranger.snapshot(at: 102.6).beacons.map(\.proximity) == [.unknown])
        // Heard again at 10 cm: the old level (1 m) does not hold it back.
        for tenth in 0...5 { _ = ranger.observe(sighting(rssi: -39, at: 103 + Double(tenth) / 10)) }
        let again = ranger.snapshot(at: 103.6).beacons
        #expect(again.map(\.proximity) == [.immediate] && abs((again[0].rssi ?? 0) + 39) < 1, "\(again)")
    }
}
