import Foundation

/// How a `Ranger` turns a beacon's filtered RSSI into a `Proximity`.
public enum ProximityRule: Sendable, Hashable {
    /// The class changes only on evidence beyond the boundary (`ProximityClassifier`).
    case evidence
    /// The bucket of the current distance estimate, the rule before the stable class: a shopper standing near a
    /// boundary flaps between the two classes. Kept for comparison (`make bench`, the tests).
    case threshold
}

/// The RSSI levels, in dBm, at which a beacon crosses the proximity limits of a `DistanceModel`.
public struct ProximityBoundaries: Sendable, Hashable {
    /// Stronger than this: `.immediate`.
    public var immediate: Double
    /// Stronger than this (and not immediate): `.near`; weaker: `.far`.
    public var near: Double

    /// Nil when the beacon is not calibrated (no distance, so `.unknown`).
    public init?(model: DistanceModel, measuredPower: Int8) {
        guard measuredPower < 0 else { return nil }
        let power = Double(measuredPower)
        immediate = power - 10 * model.pathLossExponent * log10(model.immediateLimit)
        near = power - 10 * model.pathLossExponent * log10(model.nearLimit)
    }

    /// The class of `level` with no hysteresis: the bucket of its distance, limits included as in
    /// `DistanceModel.proximity(distance:)`.
    func bucket(_ level: Double) -> Proximity {
        level > immediate ? .immediate : level > near ? .near : .far
    }

    /// The class `level` gives evidence for when the beacon is `current`: a neighbouring class only
    /// when `level` is more than `margin` dB past the boundary, else `current`.
    @inline(__always)
    func move(_ current: Proximity, level: Double, margin: Double) -> Proximity {
        move(current, level: level, up: margin, down: margin)
    }

    /// `move` with one margin for a stronger class (`up`) and another for a weaker one (`down`).
    @inline(__always)
    func move(_ current: Proximity, level: Double, up: Double, down: Double) -> Proximity {
        switch current {
        case .immediate:
            if level < near - down { return .far }
            return level < immediate - down ? .near : .immediate
        case .near:
            if level > immediate + up { return .immediate }
            return level < near - down ? .far : .near
        case .far:
            if level > immediate + up { return .immediate }
            return level > near + up ? .near : .far
        case .unknown:
            return bucket(level)
        }
    }
}

/// The margins of `ProximityClassifier`, in standard deviations or errors of the estimate that decides.
/// Smaller margins enter a class sooner and flap more: `make bench` prints the trade.
public struct ProximityMargins: Sendable, Hashable {
    /// Standard deviations of the Kalman level past a boundary that move the class while walking.
    public var moving: Double
    /// Standard errors of the standing mean past a boundary that move the class.
    public var standingMean: Double
    /// Standard deviations of the Kalman level (from the standing mean) or trend (from 0) that say the
    /// shopper moved.
    public var motionGate: Double
    /// Seconds the Kalman level is projected along its trend.
    public var lead: Double
    /// Standard errors of the recent mean from the standing mean that say the shopper set off.
    public var departureGate: Double
    /// Standard errors of the recent mean past a boundary that move the class once the shopper set off.
    public var departure: Double

    public init(
        moving: Double, standingMean: Double, motionGate: Double, lead: Double, departureGate: Double,
        departure: Double
    ) {
        self.moving = moving
        self.standingMean = standingMean
        self.motionGate = motionGate
        self.lead = lead
        self.departureGate = departureGate
        self.departure = departure
    }

    /// Chosen on the counter walk (`BeaconWalk.counterLinger`) at 2 to 6 dB of noise: at most 1.5x the ideal
    /// number of class changes and 90 % of snapshots right, with the least entry lag that leaves.
    public static let standard = ProximityMargins(
        moving: 2.5, standingMean: 0.75, motionGate: 3, lead: 1.5, departureGate: 3.5, departure: 1)

    /// For a scan that hears a beacon only in its windows (`ScanPower.balanced`, `.low`): a quarter of the readings
    /// or fewer, so the Kalman trend follows a walk later and the mean of the last 8 readings spans seconds. A lower
    /// motion gate and departure gate and a longer lead see the walk sooner; the wider standing margin pays for
    /// that in flapping. Chosen on the counter walk sampled as balanced at 2 to 6 dB (docs/PROXIMITY.md).
    public static let sampled = ProximityMargins(
        moving: 2.5, standingMean: 1, motionGate: 2.5, lead: 2, departureGate: 3, departure: 0.5)

    /// The margins for a scan at `power`.
    public static func standard(for power: ScanPower) -> ProximityMargins {
        power == .high ? .standard : .sampled
    }
}

/// The stable proximity of one beacon: it changes class only on evidence beyond the boundary, a margin counted in
/// standard errors of the estimate that decides (the Kalman level walking, the mean of the readings since the
/// shopper stopped standing, the recent mean setting off), so a shopper standing past 3 m does not flap between
/// near and far. docs/PROXIMITY.md says why each part is there; `ProximityTrial` measures it (`make bench`).
///
/// `update` is O(1) and does not allocate. Readings are whole dBm (HCI's RSSI), so the sums of readings and of
/// their squares are kept as integers: exact, as their doubles were, and the recent mean is a running sum.
public struct ProximityClassifier: Sendable {
    /// The readings of the recent mean (0.8 s at 10 Hz).
    static let recentCount = 8

    public private(set) var proximity: Proximity = .unknown
    private var standingSum = 0
    private var standingSquares = 0
    private var standingCount = 0
    /// The last `recentCount` readings, a ring, and their sum.
    private var recent: (Int8, Int8, Int8, Int8, Int8, Int8, Int8, Int8) = (0, 0, 0, 0, 0, 0, 0, 0)
    private var recentSum = 0
    private var recentNext = 0
    private var recentFull = false

    public init() {}

    /// Forgets the class and the standing mean (a beacon heard again after being lost).
    public mutating func reset() {
        self = ProximityClassifier()
    }

    /// Takes one reading `rssi` (dBm) after `filter` has been updated with it. `measurementNoise` is the
    /// variance of one reading, dB².
    ///
    /// Inlined into the ranger's per-reading path, as the filter's update is.
    @inline(__always)
    public mutating func update(
        rssi: Int8, filter: RSSIFilter, measurementNoise: Double, boundaries: ProximityBoundaries,
        margins: ProximityMargins
    ) {
        guard let level = filter.value else { return }
        let reading = Int(rssi)
        withUnsafeMutableBytes(of: &recent) { ring in
            let slot = ring.baseAddress!.assumingMemoryBound(to: Int8.self) + recentNext
            recentSum += reading - Int(slot.pointee)
            slot.pointee = rssi
        }
        recentNext = (recentNext + 1) & (Self.recentCount - 1)
        recentFull = recentFull || recentNext == 0
        if recentFull, standingCount >= 2 * Self.recentCount, proximity != .unknown {
            departOnRecentReadings(boundaries: boundaries, margins: margins)
        }
        let levelVariance = max(filter.levelVariance, .leastNormalMagnitude)
        if standingCount > 0 {
            let count = Double(standingCount)
            let mean = Double(standingSum) / count
            let moved =
                abs(level - mean) > margins.motionGate * (levelVariance + measurementNoise / count).squareRoot()
                || abs(filter.trend) > margins.motionGate * filter.trendVariance.squareRoot()
            if moved { restartStanding() }
        }
        standingSum += reading
        standingSquares += reading * reading
        standingCount += 1
        let count = Double(standingCount)
        let projected = level + filter.trend * margins.lead
        guard proximity != .unknown else {
            proximity = boundaries.bucket(projected)
            return
        }
        // Walking, the Kalman level decides. Standing, the mean decides once it holds more readings than
        // the Kalman level is worth (measurementNoise / levelVariance of them): a walk starting restarts it.
        guard count * levelVariance >= measurementNoise else {
            proximity = boundaries.move(
                proximity, level: projected, margin: margins.moving * levelVariance.squareRoot())
            return
        }
        proximity = boundaries.move(
            proximity, level: Double(standingSum) / count,
            margin: margins.standingMean * (measurementNoise / count).squareRoot())
    }

    /// Moves the class when the recent readings have left the standing mean across a boundary.
    @inline(__always)
    private mutating func departOnRecentReadings(boundaries: ProximityBoundaries, margins: ProximityMargins) {
        let count = Double(standingCount)
        let mean = Double(standingSum) / count
        // The spread of the readings since the stop, at least 1 dB: whole-dBm readings of a still beacon
        // can all be equal.
        let variance = max((Double(standingSquares) - count * mean * mean) / (count - 1), 1)
        let recentMean = Double(recentSum) / Double(Self.recentCount)
        let departure = recentMean - mean
        // Compared squared: the square root is only needed past the gate.
        let squaredError = variance / Double(Self.recentCount)
        guard departure * departure > margins.departureGate * margins.departureGate * squaredError else { return }
        let margin = margins.departure * squaredError.squareRoot()
        let moved =
            recentMean > mean
            ? boundaries.move(proximity, level: recentMean, up: margin, down: .infinity)
            : boundaries.move(proximity, level: recentMean, up: .infinity, down: margin)
        guard moved != proximity else { return }
        proximity = moved
        restartStanding()
    }

    private mutating func restartStanding() {
        standingSum = 0
        standingSquares = 0
        standingCount = 0
    }
}
