import Beacons
import Foundation
import Testing

/// SplitMix64: a seeded, deterministic generator, so every synthetic trace is the same on every run.
struct SeededGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(UInt64(1) << 53) }

    /// Standard normal, by the Box-Muller transform.
    mutating func gaussian() -> Double {
        let u1 = max(unit(), .leastNormalMagnitude)
        let u2 = unit()
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}

/// One reading of a synthetic walk: the true distance and the RSSI a receiver reports for it.
struct SyntheticReading {
    var time: Double
    var distance: Double
    var rssi: Int8
}

/// RSSI readings at `rate` Hz of a beacon whose true distance is `distance(t)`: log-distance path loss
/// (exponent 2) from `measuredPower`, gaussian noise of `noise` dB, rounded to whole dBm like a
/// controller reports them.
func syntheticTrace(
    seed: UInt64, duration: Double, rate: Double = 10, noise: Double, measuredPower: Int8 = -59,
    start: Double = 0, distance: (Double) -> Double
) -> [SyntheticReading] {
    var generator = SeededGenerator(seed: seed)
    var readings: [SyntheticReading] = []
    for index in 0..<Int(duration * rate) {
        let t = Double(index) / rate
        let d = distance(t)
        let rssi = Double(measuredPower) - 20 * log10(d) + noise * generator.gaussian()
        readings.append(SyntheticReading(time: start + t, distance: d, rssi: Int8(max(-127, min(20, rssi.rounded())))))
    }
    return readings
}

/// Walking away from 0.2 m to 8.2 m over 20 s: crosses both proximity limits once.
func walkAway(_ t: Double) -> Double { 0.2 + 0.4 * t }

/// How a filter fares over many noisy walks: proximity changes per reading (the truth changes twice
/// per walk) and the mean |log2(estimate / truth)| of the distance.
func score(_ method: RSSIFilter.Method, seeds: Range<UInt64>, noise: Double) -> (flaps: Int, error: Double) {
    let model = DistanceModel()
    var flaps = 0
    var error = 0.0
    var count = 0
    for seed in seeds {
        var filter = RSSIFilter(method)
        var previous: Proximity?
        for reading in syntheticTrace(seed: seed, duration: 20, noise: noise, distance: walkAway) {
            let rssi = filter.update(rssi: Double(reading.rssi), at: reading.time)
            let estimate = model.distance(rssi: rssi, measuredPower: -59)!
            let proximity = model.proximity(distance: estimate)
            if let previous, previous != proximity { flaps += 1 }
            previous = proximity
            error += abs(log2(estimate / reading.distance))
            count += 1
        }
    }
    return (flaps, error / Double(count))
}

@Suite struct RSSIFilterTests {
    @Test func kalmanFlapsLessThanARunningAverageAndTracksAsWell() {
        let seeds: Range<UInt64> = 1..<41
        let kalman = score(.standard, seeds: seeds, noise: 5)
        // The same window as a snapshot: one second of readings at 10 Hz.
        let average = score(.runningAverage(window: 10), seeds: seeds, noise: 5)
        #expect(kalman.flaps < average.flaps * 4 / 5, "Kalman \(kalman), running average \(average)")
        #expect(kalman.error <= average.error, "Kalman \(kalman), running average \(average)")
        // Within about 20% of the true distance on average, over a walk from 0.2 m to 8.2 m.
        #expect(kalman.error < 0.27)
        #expect(kalman.flaps >= 2 * seeds.count, "every walk crosses both limits")
    }

    @Test func noRunningAverageWindowBeatsTheKalmanFilterOnBothCounts() {
        let seeds: Range<UInt64> = 1..<21
        let kalman = score(.standard, seeds: seeds, noise: 5)
        for window in 1...40 {
            let average = score(.runningAverage(window: window), seeds: seeds, noise: 5)
            #expect(
                average.flaps > kalman.flaps || average.error > kalman.error,
                "window \(window): \(average) vs Kalman \(kalman)")
        }
    }

    @Test func kalmanFollowsARampWithoutTheLagOfAnAverage() {
        var kalman = RSSIFilter(.standard)
        var average = RSSIFilter(.runningAverage(window: 10))
        var truth = 0.0
        for index in 0..<100 {
            let t = Double(index) / 10
            truth = -50 - 3 * t  // walking away: 3 dB/s weaker
            kalman.update(rssi: truth, at: t)
            average.update(rssi: truth, at: t)
        }
        #expect(abs(kalman.value! - truth) < 0.3)
        // The average trails by half its window: 4.5 readings of 0.3 dB.
        #expect(abs(average.value! - truth - 1.35) < 1e-9)
    }

    @Test func runningAverageIsTheMeanOfTheLastWindow() {
        var filter = RSSIFilter(.runningAverage(window: 3))
        let outputs = [-60.0, -62, -64, -70, -70].enumerated().map { index, rssi in
            filter.update(rssi: rssi, at: Double(index))
        }
        #expect(outputs == [-60, -61, -62, -196.0 / 3, -68])
    }

    @Test func firstReadingAndResetTakeTheReadingAsIs() {
        var filter = RSSIFilter(.standard)
        #expect(filter.value == nil)
        #expect(filter.update(rssi: -70, at: 5) == -70)
        filter.update(rssi: -50, at: 5.1)
        #expect(filter.value! > -70 && filter.value! < -50)
        filter.reset()
        #expect(filter.value == nil)
        #expect(filter.update(rssi: -40, at: 100) == -40)
    }

    @Test func readingsOutOfOrderStayFinite() {
        var filter = RSSIFilter(.standard)
        for (time, rssi) in [(10.0, -60.0), (9.0, -62), (9.5, -61), (10.2, -63)] {
            #expect(filter.update(rssi: rssi, at: time).isFinite)
        }
    }

    @Test func invalidMethodsSayWhy() {
        #expect(RSSIFilter.Method.standard.problem == nil)
        #expect(RSSIFilter.Method.runningAverage(window: 0).problem != nil)
        #expect(RSSIFilter.Method.kalman(accelerationNoise: -1, measurementNoise: 25).problem != nil)
        #expect(RSSIFilter.Method.kalman(accelerationNoise: 1, measurementNoise: .nan).problem != nil)
    }
}
