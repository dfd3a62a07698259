import Beacons
import Foundation

extension BeaconWalk {
    /// The walk past a counter: one beacon (measured power -59 dBm) heard at 10 Hz; the shopper
    /// stands 10 s at 0.3 m, walks out to 12 m at 0.6 m/s, stands 10 s, walks back to 3.3 m, lingers
    /// 30 s there (just past the 3 m near/far limit), comes back to 0.3 m and stands 10 s. The truth
    /// changes class four times.
    public static func counterLinger(rssiNoise: Double, seed: UInt64) -> BeaconWalk {
        let frame = BeaconFrame(
            kind: .iBeacon,
            identity: BeaconIdentity(
                uuid: UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!, major: 1, minor: 1),
            measuredPower: -59)
        let path = [
            (0, 0.3), (10, 0.3), (29.5, 12), (39.5, 12), (54, 3.3), (84, 3.3), (89, 0.3), (99, 0.3),
        ].map { Waypoint(time: $0.0, distance: $0.1) }
        return BeaconWalk(
            beacons: [Beacon(frame: frame, address: BluetoothAddress(wire: (1, 2, 3, 4, 5, 0xC6)), path: path)],
            advertisingInterval: 0.1, pathLossExponent: 2, rssiNoise: rssiNoise, seed: seed)
    }
}

/// How a proximity rule fares on simulated walks: snapshots once a second, each compared with the
/// class of the true distance at that moment.
public struct ProximityScore: Sendable, Hashable {
    public var walks = 0
    /// Class changes between consecutive snapshots.
    public var changes = 0
    /// The changes of the truth sampled at the same snapshots.
    public var idealChanges = 0
    public var snapshots = 0
    /// Snapshots whose class is the true one.
    public var agreeing = 0
    /// Times the truth entered a class, and of those the ones the rule showed before the truth left it.
    public var entries = 0
    public var entriesShown = 0
    /// Seconds from the truth entering a class to the first snapshot showing it, summed over entries shown.
    public var entryLagSum = 0.0
    /// Of the entries, those made mid-walk (the shopper moving for the whole second before), shown, and their
    /// summed lag. The others are made setting off from a stand.
    public var walkingEntries = 0
    public var walkingEntriesShown = 0
    public var walkingEntryLagSum = 0.0
    /// Snapshots taken while the shopper stood still (for the whole second before), and the class changes
    /// at them: flapping, as the truth did not change.
    public var standingSnapshots = 0
    public var standingChanges = 0

    public init() {}

    public var changeRatio: Double { Double(changes) / Double(max(idealChanges, 1)) }
    public var agreement: Double { Double(agreeing) / Double(max(snapshots, 1)) }
    public var meanEntryLag: Double { entryLagSum / Double(max(entriesShown, 1)) }
    public var missedEntries: Int { entries - entriesShown }
    public var meanWalkingEntryLag: Double { walkingEntryLagSum / Double(max(walkingEntriesShown, 1)) }
    public var meanSettingOffEntryLag: Double {
        (entryLagSum - walkingEntryLagSum) / Double(max(entriesShown - walkingEntriesShown, 1))
    }
    /// Class changes while standing, per walk.
    public var standingChangesPerWalk: Double { Double(standingChanges) / Double(max(walks, 1)) }

    public static func + (a: ProximityScore, b: ProximityScore) -> ProximityScore {
        var sum = a
        sum.walks += b.walks
        sum.changes += b.changes
        sum.idealChanges += b.idealChanges
        sum.snapshots += b.snapshots
        sum.agreeing += b.agreeing
        sum.entries += b.entries
        sum.entriesShown += b.entriesShown
        sum.entryLagSum += b.entryLagSum
        sum.walkingEntries += b.walkingEntries
        sum.walkingEntriesShown += b.walkingEntriesShown
        sum.walkingEntryLagSum += b.walkingEntryLagSum
        sum.standingSnapshots += b.standingSnapshots
        sum.standingChanges += b.standingChanges
        return sum
    }
}

/// Runs a proximity rule over a `BeaconWalk` of one beacon: the engine (a `Ranger`) or one of the
/// Android Beacon Library's filters classified by the same `DistanceModel` at the same ticks.
public enum ProximityTrial {
    /// Margins small enough that the engine enters a class from a stand about as early as the bare Kalman
    /// filter at 6 dB: the trade `make bench` shows beside `ProximityMargins.standard` (they flap more).
    public static let eagerMargins = ProximityMargins(
        moving: 2.5, standingMean: 0.75, motionGate: 3, lead: 2, departureGate: 2.5, departure: 0)

    public enum Method: Sendable, Hashable, CaseIterable {
        /// The `Ranger` with its stable class (`ProximityRule.evidence`).
        case engine
        /// The `Ranger` with the bare Kalman filter's bucket (`ProximityRule.threshold`), the rule before the stable class.
        case kalmanThreshold
        /// AltBeacon's default: 20 s running average, 10 % trimmed at each end.
        case altBeaconRunningAverage
        /// AltBeacon's ARMA filter, c = 0.1, with its integer state.
        case altBeaconARMA
        /// The ARMA recurrence, c = 0.1, in real numbers.
        case arma

        public var name: String {
            switch self {
            case .engine: "engine (evidence rule)"
            case .kalmanThreshold: "Kalman, no hysteresis (before)"
            case .altBeaconRunningAverage: "AltBeacon running average 20 s"
            case .altBeaconARMA: "AltBeacon ARMA c=0.1 (int state)"
            case .arma: "ARMA c=0.1 (real)"
            }
        }
    }

    /// The snapshot classes of `method` on `walk` (its first beacon), one per second of the sightings'
    /// clock, as (time, class).
    /// `margins` are the engine's, by default the profile's (`ProximityMargins.standard(for:)`). `power` samples
    /// the walk as that profile's scan windows hear it (a window of LE_Scan_Window at the start of each
    /// LE_Scan_Interval from the walk's start), with the tracking age the scan gives that profile; an
    /// advertisement between windows is only the clock's tick.
    public static func snapshots(
        _ method: Method, walk: BeaconWalk, margins: ProximityMargins? = nil, power: ScanPower = .high
    ) -> [(time: Double, proximity: Proximity)] {
        let model = DistanceModel(pathLossExponent: walk.pathLossExponent)
        let start = walk.start.unixSeconds
        func heard(_ time: Double) -> Bool {
            power.window == power.interval
                || (time - start).truncatingRemainder(dividingBy: power.intervalSeconds) < power.windowSeconds
        }
        var out: [(time: Double, proximity: Proximity)] = []
        switch method {
        case .engine, .kalmanThreshold:
            var ranger = try! Ranger(
                configuration: Ranger.Configuration(
                    maxTrackingAge: max(5, power.minimumTrackingAge), distanceModel: model,
                    proximityRule: method == .engine ? .evidence : .threshold,
                    proximityMargins: margins ?? .standard(for: power)))
            walk.forEachAdvert { sighting, _ in
                let snapshot = heard(sighting.time) ? ranger.observe(sighting) : ranger.advance(to: sighting.time)
                if let snapshot {
                    out.append((snapshot.time, snapshot.beacons.first?.proximity ?? .unknown))
                }
            }
        case .altBeaconRunningAverage, .altBeaconARMA, .arma:
            var average = TrimmedRunningAverage()
            var arma = ARMAFilter(integerState: method == .altBeaconARMA)
            var origin: Double?
            var nextTick = 1.0
            walk.forEachAdvert { sighting, _ in
                let time = sighting.time
                guard heard(time) else { return }
                if let origin, time >= origin + nextTick {
                    let tick = (time - origin).rounded(.down)
                    nextTick = tick + 1
                    let level = method == .altBeaconRunningAverage ? average.value(at: origin + tick) : arma.value
                    let distance = level.flatMap { model.distance(rssi: $0, measuredPower: sighting.frame.measuredPower) }
                    out.append((origin + tick, model.proximity(distance: distance)))
                }
                if origin == nil { origin = time }
                average.update(rssi: Double(sighting.rssi), at: time)
                arma.update(rssi: Double(sighting.rssi))
            }
        }
        return out
    }

    /// Scores `method` on `walk` against the class of the walk's true distance.
    public static func score(
        _ method: Method, walk: BeaconWalk, margins: ProximityMargins? = nil, power: ScanPower = .high
    ) -> ProximityScore {
        let model = DistanceModel(pathLossExponent: walk.pathLossExponent)
        let beacon = walk.beacons[0]
        let start = walk.start.unixSeconds
        let shown = snapshots(method, walk: walk, margins: margins, power: power)
        // The 10 ms steps of the second before `time` (walk time) in which the shopper stood still.
        func stillSteps(before time: Double) -> Int {
            (0..<100).count { step in
                let t = time - 1 + Double(step) / 100
                return abs(beacon.distance(at: t + 0.01) - beacon.distance(at: t)) < 1e-9
            }
        }
        var score = ProximityScore()
        score.walks = 1
        var previous: (shown: Proximity, truth: Proximity)?
        for (time, proximity) in shown {
            let truth = model.proximity(distance: beacon.distance(at: time - start))
            score.snapshots += 1
            if proximity == truth { score.agreeing += 1 }
            let standing = stillSteps(before: time - start) == 100
            if standing { score.standingSnapshots += 1 }
            if let previous {
                if previous.shown != proximity {
                    score.changes += 1
                    if standing { score.standingChanges += 1 }
                }
                if previous.truth != truth { score.idealChanges += 1 }
            }
            previous = (proximity, truth)
        }
        // The truth's entries at 10 ms resolution; each is shown if a snapshot shows the class before the
        // truth leaves it again.
        var entries: [(time: Double, proximity: Proximity)] = []
        var truth = model.proximity(distance: beacon.distance(at: 0))
        for step in 1...Int(walk.duration * 100) {
            let t = Double(step) / 100
            let now = model.proximity(distance: beacon.distance(at: t))
            if now != truth { entries.append((start + t, now)) }
            truth = now
        }
        for (index, entry) in entries.enumerated() {
            let leaves = index + 1 < entries.count ? entries[index + 1].time : .infinity
            let walking = stillSteps(before: entry.time - start) == 0
            score.entries += 1
            if walking { score.walkingEntries += 1 }
            if let first = shown.first(where: { $0.time >= entry.time && $0.proximity == entry.proximity }),
                first.time < leaves
            {
                score.entriesShown += 1
                score.entryLagSum += first.time - entry.time
                if walking {
                    score.walkingEntriesShown += 1
                    score.walkingEntryLagSum += first.time - entry.time
                }
            }
        }
        return score
    }
}
