import Beacons
import Foundation
import Testing

@testable import BeaconRadio

/// A live clock a test moves: `now` (monotonic: no time asleep) and the seconds the machine was suspended.
private final class SleepingClock: BeaconClock, @unchecked Sendable {
    private let lock = NSLock()
    private var time = 1_000.0
    private var slept = 0.0

    func now() -> Double { lock.withLock { time } }
    var sleptSeconds: Double { lock.withLock { slept } }

    func run(_ seconds: Double) { lock.withLock { time += seconds } }
    func sleep(_ seconds: Double) { lock.withLock { slept += seconds } }
}

@Suite struct ScanTickerTests {
    /// A resume is a growth of the time asleep, told once; live time goes on where it stopped.
    @Test func aResumeIsToldOnceWithTheTimeAsleep() {
        let clock = SleepingClock()
        clock.sleep(120)  // before the scan started: not this scan's sleep
        var ticker = ScanTicker(interval: 1, clock: clock)
        clock.run(0.5)
        #expect(ticker.sleepEnded(clock: clock) == nil)
        clock.sleep(3600)
        #expect(ticker.sleepEnded(clock: clock) == 3600)
        #expect(ticker.sleepEnded(clock: clock) == nil)
        clock.sleep(0.1)  // clock noise, not a suspend
        #expect(ticker.sleepEnded(clock: clock) == nil)
    }

    /// Ticks once a second: the wait is the time to the next tick, never a busy zero while it is ahead.
    @Test func aQuietScanWaitsForTheNextTick() {
        let clock = SleepingClock()
        var ticker = ScanTicker(interval: 1, clock: clock)
        #expect(ticker.waitMilliseconds(clock: clock) == 1000)
        var ticks: [Double] = []
        clock.run(0.5)
        ticker.tickIfDue(clock: clock) { ticks.append($0) }
        #expect(ticks.isEmpty && ticker.waitMilliseconds(clock: clock) == 500)
        clock.run(0.5)
        ticker.tickIfDue(clock: clock) { ticks.append($0) }
        #expect(ticks == [1_001] && ticker.waitMilliseconds(clock: clock) == 1000)
        // A wait that ended a hair early ticks all the same, rather than waking again for the rest.
        clock.run(0.998046875)
        ticker.tickIfDue(clock: clock) { ticks.append($0) }
        #expect(ticks == [1_001, 1_001.998046875])
    }

    /// The system's clock: CLOCK_BOOTTIME minus CLOCK_MONOTONIC, the seconds suspended since boot, never less
    /// than 0 and steady while awake.
    @Test func theMonotonicClockTellsTheTimeSuspended() {
        let clock = MonotonicBeaconClock()
        let first = clock.sleptSeconds
        #expect(first >= 0)
        #expect(abs(clock.sleptSeconds - first) < ScanTicker.shortestSleep)
    }
}
