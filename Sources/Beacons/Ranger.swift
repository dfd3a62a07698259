/// A configuration value a beacon engine cannot run with.
public struct InvalidBeaconConfiguration: Error, Equatable, CustomStringConvertible {
    /// What is wrong and what would be accepted.
    public var description: String

    public init(_ description: String) { self.description = description }
}

/// One beacon in a ranging snapshot: Core Location's `CLBeacon`.
public struct RangedBeacon: Hashable, Sendable {
    public var identity: BeaconIdentity
    public var kind: BeaconKind
    public var proximity: Proximity
    /// Estimated metres; nil when the proximity is `.unknown` (Core Location's accuracy of -1).
    public var distance: Double?
    /// Filtered RSSI in dBm as of the last reading; nil when no reading carried an RSSI.
    public var rssi: Double?
    /// The last raw RSSI reported by the controller (127: not available).
    public var lastRSSI: Int8
    /// The measured power (RSSI at 1 m) of the last frame heard.
    public var measuredPower: Int8
    /// The address it was last heard from; it may rotate, the identity does not.
    public var address: BluetoothAddress
    /// Seconds on the sightings' clock.
    public var lastSeen: Double
}

/// The beacons in range at one moment, nearest first (by proximity, then distance, then identity).
public struct RangingSnapshot: Hashable, Sendable {
    public var time: Double
    public var beacons: [RangedBeacon]
}

/// Ranging: which beacons are around and how near each is, per `BeaconIdentity` (never per address,
/// since addresses rotate).
///
/// Time comes only from the sightings and from `advance(to:)`. Snapshots fall on ticks
/// `t0 + k * snapshotInterval`, where `t0` is the first time the ranger learns of; the snapshot of tick
/// `T` holds every sighting earlier than `T`. When time jumps over several ticks, only the latest one
/// is reported. A beacon unheard for `maxTrackingAge` is `.unknown`; once a snapshot has shown it so
/// and it has been unheard for `dropAfter`, it is forgotten. Every beacon heard therefore appears in
/// some snapshot as long as the caller takes a last `snapshot(at:)` at the end.
///
/// `observe` is O(1) and does not allocate once a beacon is known: the pipeline's budget is about
/// 500 ns per sighting.
public struct Ranger: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Seconds between snapshots.
        public var snapshotInterval: Double
        /// Seconds of silence after which a beacon is `.unknown`.
        public var maxTrackingAge: Double
        /// Seconds of silence after which an `.unknown` beacon is dropped; at least `maxTrackingAge`. By default
        /// twice the tracking age, 10 s at least, so a longer tracking age needs no setting of its own.
        public var dropAfter: Double
        public var filter: RSSIFilter.Method
        public var distanceModel: DistanceModel

        public init(
            snapshotInterval: Double = 1, maxTrackingAge: Double = 5, dropAfter: Double? = nil,
            filter: RSSIFilter.Method = .standard, distanceModel: DistanceModel = DistanceModel()
        ) {
            self.snapshotInterval = snapshotInterval
            self.maxTrackingAge = maxTrackingAge
            self.dropAfter = dropAfter ?? max(10, 2 * maxTrackingAge)
            self.filter = filter
            self.distanceModel = distanceModel
        }
    }

    private struct Track: Sendable {
        var filter: RSSIFilter
        var kind: BeaconKind
        var lastRSSI: Int8
        var measuredPower: Int8
        var address: BluetoothAddress
        var lastSeen: Double
        /// A snapshot has shown this beacon as `.unknown` since it was last heard.
        var reportedLost = false

        init(_ sighting: BeaconSighting, filter method: RSSIFilter.Method, maxTrackingAge: Double) {
            filter = RSSIFilter(method)
            kind = sighting.frame.kind
            lastRSSI = sighting.rssi
            measuredPower = sighting.frame.measuredPower
            address = sighting.address
            lastSeen = sighting.time
            record(sighting, maxTrackingAge: maxTrackingAge)
        }

        mutating func record(_ sighting: BeaconSighting, maxTrackingAge: Double) {
            // A beacon heard again after being lost starts afresh: its old level and trend are stale.
            if sighting.time - lastSeen >= maxTrackingAge { filter.reset() }
            kind = sighting.frame.kind
            lastRSSI = sighting.rssi
            measuredPower = sighting.frame.measuredPower
            address = sighting.address
            lastSeen = max(lastSeen, sighting.time)
            reportedLost = false
            // 127 is HCI's "RSSI not available": the beacon was heard, but carries no level.
            if sighting.rssi != 127 { filter.update(rssi: Double(sighting.rssi), at: sighting.time) }
        }
    }

    public let configuration: Configuration
    private var tracks: [BeaconIdentity: Track] = [:]
    /// Tick `k` is at `origin + k * snapshotInterval`; `nextTick` is the first not yet reported.
    private var origin: Double?
    private var nextTick = 1.0
    /// The latest time seen, from sightings or `advance(to:)`.
    public private(set) var now: Double?

    public init(configuration: Configuration = Configuration()) throws(InvalidBeaconConfiguration) {
        let c = configuration
        guard c.snapshotInterval.isFinite, c.snapshotInterval > 0 else {
            throw InvalidBeaconConfiguration(
                "snapshot interval must be a positive number of seconds, got \(c.snapshotInterval)")
        }
        guard c.maxTrackingAge.isFinite, c.maxTrackingAge > 0 else {
            throw InvalidBeaconConfiguration(
                "max tracking age must be a positive number of seconds, got \(c.maxTrackingAge)")
        }
        guard c.dropAfter.isFinite, c.dropAfter >= c.maxTrackingAge else {
            throw InvalidBeaconConfiguration(
                "drop-after (\(c.dropAfter) s) must be at least the max tracking age (\(c.maxTrackingAge) s)")
        }
        if let problem = c.filter.problem { throw InvalidBeaconConfiguration(problem) }
        if let problem = c.distanceModel.problem { throw InvalidBeaconConfiguration(problem) }
        self.configuration = c
    }

    /// How many beacons are being tracked (heard and not yet dropped).
    public var trackedCount: Int { tracks.count }

    /// Records one sighting. Returns the snapshot of the latest tick at or before the sighting's time,
    /// if one fell due (taken before this sighting is counted).
    public mutating func observe(_ sighting: BeaconSighting) -> RangingSnapshot? {
        guard sighting.time.isFinite else { return nil }
        let due = advance(to: sighting.time)
        let maxTrackingAge = configuration.maxTrackingAge
        if tracks[sighting.frame.identity]?.record(sighting, maxTrackingAge: maxTrackingAge) == nil {
            tracks[sighting.frame.identity] = Track(
                sighting, filter: configuration.filter, maxTrackingAge: maxTrackingAge)
        }
        return due
    }

    /// Moves time forward to `time` (earlier times are ignored). Returns the snapshot of the latest
    /// tick at or before `time`, if one fell due.
    public mutating func advance(to time: Double) -> RangingSnapshot? {
        guard time.isFinite else { return nil }
        guard let origin else {
            origin = time
            now = time
            return nil
        }
        now = max(now ?? time, time)
        let interval = configuration.snapshotInterval
        guard time >= origin + nextTick * interval else { return nil }
        let tick = max(nextTick, ((time - origin) / interval).rounded(.down))
        nextTick = tick + 1
        return snapshot(at: origin + tick * interval)
    }

    /// The state at `time` (typically the end of a replay), outside the tick schedule.
    public mutating func snapshot(at time: Double) -> RangingSnapshot {
        let model = configuration.distanceModel
        var beacons: [RangedBeacon] = []
        beacons.reserveCapacity(tracks.count)
        var dropped: [BeaconIdentity] = []
        var lost: [BeaconIdentity] = []
        for (identity, track) in tracks {
            let silence = time - track.lastSeen
            if track.reportedLost && silence >= configuration.dropAfter {
                dropped.append(identity)
                continue
            }
            let isLost = silence >= configuration.maxTrackingAge
            let distance =
                isLost
                ? nil
                : track.filter.value.flatMap {
                    model.distance(rssi: $0, measuredPower: track.measuredPower)
                }
            beacons.append(
                RangedBeacon(
                    identity: identity, kind: track.kind, proximity: model.proximity(distance: distance),
                    distance: distance, rssi: track.filter.value, lastRSSI: track.lastRSSI,
                    measuredPower: track.measuredPower, address: track.address, lastSeen: track.lastSeen))
            if isLost && !track.reportedLost { lost.append(identity) }
        }
        for identity in lost { tracks[identity]?.reportedLost = true }
        for identity in dropped { tracks[identity] = nil }
        beacons.sort { a, b in
            if a.proximity != b.proximity { return a.proximity < b.proximity }
            let da = a.distance ?? .infinity
            let db = b.distance ?? .infinity
            if da != db { return da < db }
            return a.identity < b.identity
        }
        return RangingSnapshot(time: time, beacons: beacons)
    }
}
