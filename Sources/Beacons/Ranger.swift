import Foundation

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
    /// An Eddystone beacon's latest telemetry: the last TLM frame heard from its address while that address was
    /// its own. Nil for iBeacons and beacons without TLM.
    public var telemetry: EddystoneTelemetry?
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
/// A beacon's proximity is its stable class (`ProximityClassifier`, updated with every reading), so it
/// may differ from the bucket of the distance shown beside it: 3.1 m stays `.near` until the evidence
/// says far. Everything downstream, the offer gate (`--min-proximity`) included, sees this class.
///
/// How many beacons are tracked is bounded (`TrackingLimits`): a beacon over a limit is not tracked until
/// others are forgotten, so someone advertising made-up identities cannot grow a scan's memory.
///
/// `observe` is O(1) and does not allocate once a beacon is known: the pipeline's budget is about
/// 500 ns per sighting.
public struct Ranger: Sendable {
    /// The most beacons tracked at once. Identities cost nothing to invent: a transmitter (or a capture)
    /// announcing a million of them would otherwise hold a track, and a place in every snapshot, for each.
    /// A proximity UUID nobody asked about is held to what a store could have in range, as Home Assistant's
    /// iBeacon tracker ignores a UUID past 50 major/minor pairs; `knownUUIDs` (the retailers a scan looks
    /// for) are held only to `total`.
    public struct TrackingLimits: Sendable, Hashable {
        /// Beacons of any UUID.
        public var total: Int
        /// Beacons whose UUID is not known, together.
        public var unknownUUIDs: Int
        /// Beacons of one UUID that is not known.
        public var perUnknownUUID: Int

        public init(total: Int = 2_000, unknownUUIDs: Int = 1_000, perUnknownUUID: Int = 50) {
            self.total = total
            self.unknownUUIDs = unknownUUIDs
            self.perUnknownUUID = perUnknownUUID
        }
    }

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
        /// `.evidence` needs the Kalman filter's variance; with a running average the rule is `.threshold`.
        public var proximityRule: ProximityRule
        /// The margins of the `.evidence` rule.
        public var proximityMargins: ProximityMargins
        public var limits: TrackingLimits

        public init(
            snapshotInterval: Double = 1, maxTrackingAge: Double = 5, dropAfter: Double? = nil,
            filter: RSSIFilter.Method = .standard, distanceModel: DistanceModel = DistanceModel(),
            proximityRule: ProximityRule = .evidence, proximityMargins: ProximityMargins = .standard,
            limits: TrackingLimits = TrackingLimits()
        ) {
            self.snapshotInterval = snapshotInterval
            self.maxTrackingAge = maxTrackingAge
            self.dropAfter = dropAfter ?? max(10, 2 * maxTrackingAge)
            self.filter = filter
            self.distanceModel = distanceModel
            self.proximityRule = proximityRule
            self.proximityMargins = proximityMargins
            self.limits = limits
        }

        /// The variance of one reading when the stable class is kept, nil when the rule is `.threshold`.
        var evidenceNoise: Double? {
            guard proximityRule == .evidence, case .kalman(_, let measurementNoise) = filter else { return nil }
            return measurementNoise
        }
    }

    private struct Track: Sendable {
        let identity: BeaconIdentity
        var filter: RSSIFilter
        var classifier = ProximityClassifier()
        /// The RSSI boundaries for `measuredPower`, computed when it changes.
        var boundaries: ProximityBoundaries?
        var kind: BeaconKind
        var lastRSSI: Int8
        var measuredPower: Int8
        var address: BluetoothAddress
        var lastSeen: Double
        /// A snapshot has shown this beacon as `.unknown` since it was last heard.
        var reportedLost = false
        /// Last heard before a suspend: shown unknown until heard again, then started afresh.
        var heardBeforeSleep = false
        /// What the last snapshot showed (`range`).
        var shownProximity = Proximity.unknown
        var shownDistance: Double?
        var telemetry: EddystoneTelemetry?

        init(_ sighting: BeaconSighting, configuration: Configuration) {
            identity = sighting.frame.identity
            filter = RSSIFilter(configuration.filter)
            kind = sighting.frame.kind
            lastRSSI = sighting.rssi
            measuredPower = sighting.frame.measuredPower
            boundaries = ProximityBoundaries(model: configuration.distanceModel, measuredPower: measuredPower)
            address = sighting.address
            lastSeen = sighting.time
            record(sighting, configuration: configuration)
        }

        /// Inlined: called, it took a copy of the 152-byte configuration for every sighting.
        @inline(__always)
        mutating func record(_ sighting: BeaconSighting, configuration: Configuration) {
            // A beacon heard again after being lost starts afresh: its old level and trend are stale.
            if sighting.time - lastSeen >= configuration.maxTrackingAge || heardBeforeSleep {
                filter.reset()
                classifier.reset()
                heardBeforeSleep = false
            }
            kind = sighting.frame.kind
            lastRSSI = sighting.rssi
            if sighting.frame.measuredPower != measuredPower {
                measuredPower = sighting.frame.measuredPower
                boundaries = ProximityBoundaries(model: configuration.distanceModel, measuredPower: measuredPower)
                classifier.reset()
            }
            address = sighting.address
            lastSeen = max(lastSeen, sighting.time)
            reportedLost = false
            // 127 is HCI's "RSSI not available": the beacon was heard, but carries no level.
            guard sighting.rssi != 127 else { return }
            let rssi = Double(sighting.rssi)
            filter.update(rssi: rssi, at: sighting.time)
            if let noise = configuration.evidenceNoise, let boundaries {
                classifier.update(
                    rssi: sighting.rssi, filter: filter, measurementNoise: noise, boundaries: boundaries,
                    margins: configuration.proximityMargins)
            }
        }

        /// Sets the class and distance a snapshot at `time` shows; marks the track lost when it is.
        mutating func range(at time: Double, configuration: Configuration) {
            guard time - lastSeen < configuration.maxTrackingAge, !heardBeforeSleep else {
                reportedLost = true
                (shownProximity, shownDistance) = (.unknown, nil)
                return
            }
            let model = configuration.distanceModel
            shownDistance = filter.value.flatMap { model.distance(rssi: $0, measuredPower: measuredPower) }
            shownProximity =
                shownDistance != nil && configuration.evidenceNoise != nil && classifier.proximity != .unknown
                ? classifier.proximity : model.proximity(distance: shownDistance)
        }

        var ranged: RangedBeacon {
            RangedBeacon(
                identity: identity, kind: kind, proximity: shownProximity, distance: shownDistance,
                rssi: filter.value, lastRSSI: lastRSSI, measuredPower: measuredPower, address: address,
                lastSeen: lastSeen, telemetry: telemetry)
        }
    }

    public let configuration: Configuration
    /// The beacons tracked, in an array so that a sighting updates its track in place (through a
    /// dictionary's subscript, the track was moved out and back for every sighting).
    private var tracks: [Track] = []
    private var trackIndex: [BeaconIdentity: Int] = [:]
    /// Every track's index, in the order of the last snapshot (new tracks at the end).
    private var order: [SnapshotOrder] = []
    /// The track an identity was last found at, by a cheap hash of the identity (`recentSlot`) and the slot
    /// beside it: a store's few dozen beacons nearly always hit, where hashing each sighting's identity for `trackIndex` was a
    /// tenth of a replay. A hit is checked against the track's identity, so a slot two identities share, or
    /// an index a dropped track left stale, only sends the lookup on to `trackIndex`.
    private var recentTracks = [Int32](repeating: -1, count: 1 << Ranger.recentSlotBits)
    private static let recentSlotBits = 10
    /// Tracks per proximity UUID, and how many of them have a UUID outside `knownUUIDs`.
    private var tracksPerUUID: [UUID: Int] = [:]
    private var unknownTracks = 0
    /// The UUIDs held only to `limits.total` (the regions a scan monitors, the retailers it knows).
    public var knownUUIDs: Set<UUID> = [] {
        didSet { unknownTracks = tracksPerUUID.reduce(0) { knownUUIDs.contains($1.key) ? $0 : $0 + $1.value } }
    }
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
        guard c.limits.total > 0, c.limits.unknownUUIDs >= 0, c.limits.perUnknownUUID >= 0 else {
            throw InvalidBeaconConfiguration(
                "tracking limits must be at least 1 beacon in all and 0 of unknown UUIDs, got \(c.limits)")
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
        if sighting.frame.kind == .eddystoneTelemetry {
            attach(sighting)
            return due
        }
        let identity = sighting.frame.identity
        let slot = Self.recentSlot(identity)
        if let recent = recentTrack(of: identity, at: slot) ?? recentTrack(of: identity, at: slot ^ 1) {
            tracks[recent].record(sighting, configuration: configuration)
        } else if let index = trackIndex[identity] {
            remember(index, slot: slot)
            tracks[index].record(sighting, configuration: configuration)
        } else if admits(identity.uuid) {
            remember(tracks.count, slot: slot)
            trackIndex[identity] = tracks.count
            order.append(SnapshotOrder(index: tracks.count))
            tracks.append(Track(sighting, configuration: configuration))
            count(identity.uuid, by: 1)
        }
        return due
    }

    /// Gives a TLM sighting's telemetry to the Eddystone beacon that owns its address now: the UID or EID beacon
    /// heard from it last (Eddystone interleaves TLM with a beacon's own frames, from one address). A beacon that
    /// sent from the address before another took it keeps what it had; a TLM from an address no Eddystone beacon
    /// was heard from is nobody's. Out of line, and a walk of the tracks: TLM frames are few.
    @inline(never)
    private mutating func attach(_ sighting: BeaconSighting) {
        var owner: Int?
        for index in tracks.indices where tracks[index].address == sighting.address {
            let kind = tracks[index].kind
            guard kind == .eddystoneUID || kind == .eddystoneEID else { continue }
            if owner.map({ tracks[index].lastSeen > tracks[$0].lastSeen }) ?? true { owner = index }
        }
        if let owner { tracks[owner].telemetry = sighting.telemetry }
    }

    /// `identity`'s slot in `recentTracks`: its numbers and the UUID's last eight bytes, mixed by a
    /// multiplication (Fibonacci hashing) whose top bits are the slot.
    private static func recentSlot(_ identity: BeaconIdentity) -> Int {
        let key = identity.uuidStorage.1 ^ (UInt64(identity.major) << 16 | UInt64(identity.minor))
        return Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> (64 - UInt64(recentSlotBits)))
    }

    /// The track `recentTracks[slot]` points at, if it is `identity`'s.
    @inline(__always)
    private func recentTrack(of identity: BeaconIdentity, at slot: Int) -> Int? {
        let index = Int(recentTracks[slot])
        return index >= 0 && index < tracks.count && tracks[index].identity == identity ? index : nil
    }

    /// Notes the track at `index` in its slot, or in the slot beside it when only that one is free: two beacons
    /// of one slot then both hit (one store's 40 beacons shared a slot often enough that 7 % of its sightings
    /// went on to `trackIndex`).
    private mutating func remember(_ index: Int, slot first: Int) {
        let slot = recentTracks[first] >= 0 && recentTracks[first ^ 1] < 0 ? first ^ 1 : first
        recentTracks[slot] = Int32(index)
    }

    /// Whether a new beacon of `uuid` fits within the limits.
    private func admits(_ uuid: UUID) -> Bool {
        let limits = configuration.limits
        guard tracks.count < limits.total else { return false }
        if knownUUIDs.contains(uuid) { return true }
        return unknownTracks < limits.unknownUUIDs && tracksPerUUID[uuid, default: 0] < limits.perUnknownUUID
    }

    private mutating func count(_ uuid: UUID, by change: Int) {
        let count = tracksPerUUID[uuid, default: 0] + change
        tracksPerUUID[uuid] = count == 0 ? nil : count
        if !knownUUIDs.contains(uuid) { unknownTracks += change }
    }

    /// Moves time forward to `time` (earlier times are ignored). Returns the snapshot of the latest
    /// tick at or before `time`, if one fell due.
    ///
    /// Inlined: every sighting passes here, and few take a snapshot.
    @inline(__always)
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

    /// The machine resumed from a suspend: what was heard before it is no longer current, so every beacon
    /// tracked shows unknown until heard again (and then starts afresh, its old level stale). Live time leaves
    /// the sleep out, so without this a beacon heard just before it would show as present just after.
    public mutating func resume() {
        for index in tracks.indices { tracks[index].heardBeforeSleep = true }
    }

    /// The state at `time` (typically the end of a replay), outside the tick schedule.
    public mutating func snapshot(at time: Double) -> RangingSnapshot {
        forgetLostTracks(at: time)
        // `order` holds every track once. Through buffers, not the arrays' subscripts: those checked each
        // array's uniqueness for every beacon of every snapshot.
        let configuration = self.configuration
        tracks.withUnsafeMutableBufferPointer { tracks in
            order.withUnsafeMutableBufferPointer { order in
                for position in order.indices {
                    let track = order[position].index
                    tracks[track].range(at: time, configuration: configuration)
                    order[position].proximity = tracks[track].shownProximity
                    order[position].distance = tracks[track].shownDistance ?? .infinity
                }
            }
        }
        // `order` holds the last snapshot's order, which few beacons leave between two snapshots: the sort
        // (insertion sort on short runs) moves only those, where sorting from the tracks' order moved most.
        let tracks = self.tracks
        order.sort { a, b in
            if a.proximity != b.proximity { return a.proximity < b.proximity }
            if a.distance != b.distance { return a.distance < b.distance }
            return tracks[a.index].identity < tracks[b.index].identity
        }
        return RangingSnapshot(time: time, beacons: order.map { tracks[$0.index].ranged })
    }

    /// Forgets the tracks a snapshot has shown lost and that have been unheard for `dropAfter` since.
    private mutating func forgetLostTracks(at time: Double) {
        let dropAfter = configuration.dropAfter
        guard tracks.contains(where: { $0.reportedLost && time - $0.lastSeen >= dropAfter }) else { return }
        // Where each track moves as the kept ones close up; -1: forgotten.
        var moves = [Int](repeating: -1, count: tracks.count)
        var kept = 0
        for index in tracks.indices {
            let track = tracks[index]
            if track.reportedLost && time - track.lastSeen >= dropAfter {
                trackIndex[track.identity] = nil
                count(track.identity.uuid, by: -1)
                continue
            }
            moves[index] = kept
            if kept != index {
                tracks[kept] = track
                trackIndex[track.identity] = kept
            }
            kept += 1
        }
        tracks.removeLast(tracks.count - kept)
        order.removeAll { moves[$0.index] < 0 }
        for position in order.indices { order[position].index = moves[order[position].index] }
    }

    /// Where a beacon goes in a snapshot: nearest first by proximity, then distance (infinite when there is
    /// none), then identity. 24 bytes sort faster than the hundred of a `RangedBeacon`.
    private struct SnapshotOrder {
        var proximity: Proximity = .unknown
        var distance = Double.infinity
        var index: Int
    }
}
