import Beacons
import Foundation
import Testing

@Suite struct MonotonicClockTests {
    /// Live `t` reads like a capture's (Unix seconds) and only moves forward.
    @Test func startsAtTheWallClockAndNeverGoesBack() {
        let clock = MonotonicBeaconClock()
        let first = clock.now()
        #expect(abs(first - Date().timeIntervalSince1970) < 1)
        var previous = first
        for _ in 0..<1000 {
            let now = clock.now()
            #expect(now >= previous)
            previous = now
        }
        usleep(20_000)
        #expect(clock.now() - first >= 0.02)
    }
}
