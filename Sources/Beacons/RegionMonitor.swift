import Foundation

/// Whether the shopper is in a region: Core Location's `CLRegionState`.
public enum RegionState: String, Sendable, Hashable {
    /// A matching beacon was heard less than `exitTimeout` ago.
    case inside
    /// No matching beacon for `exitTimeout`.
    case outside
    /// Not monitored, or monitored for less than `exitTimeout` without a matching beacon.
    case unknown
}

/// A region to monitor, with Core Location's per-region choice of which events to report.
public struct BeaconRegion: Hashable, Sendable {
    public var constraint: BeaconIdentityConstraint
    public var notifyOnEntry: Bool
    public var notifyOnExit: Bool

    public init(_ constraint: BeaconIdentityConstraint, notifyOnEntry: Bool = true, notifyOnExit: Bool = true) {
        self.constraint = constraint
        self.notifyOnEntry = notifyOnEntry
        self.notifyOnExit = notifyOnExit
    }
}

/// A boundary crossing, or a state reported because it was asked for (`requestState`).
public struct RegionEvent: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        case enter
        case exit
        /// The answer to `requestState(for:at:)`.
        case state(RegionState)
    }

    public var kind: Kind
    public var region: BeaconIdentityConstraint
    /// Seconds on the sightings' clock. An exit is stamped with the moment the silence reached
    /// `exitTimeout`, not with the time the monitor noticed it.
    public var time: Double

    public init(kind: Kind, region: BeaconIdentityConstraint, time: Double) {
        self.kind = kind
        self.region = region
        self.time = time
    }
}

/// Region monitoring: enter on the first matching sighting, exit after `exitTimeout` of silence.
///
/// Any number of regions (no 20-region limit); overlapping regions (a UUID and one of its majors) are
/// independent, and any matching beacon keeps a region alive. Time comes only from the sightings and
/// `advance(to:)`: a region exits at exactly `lastHeard + exitTimeout`, so a sighting at that very
/// moment comes after the exit and enters again. A region is `.unknown` until it is entered or has
/// been monitored for `exitTimeout` without a match, when it becomes `.outside` with no event.
///
/// With `monitorsEveryUUIDHeard`, every proximity UUID heard becomes a region (notifying both ways)
/// the first time it is heard, and enters at once: the CLI's behaviour when no region is given.
/// Such a region is forgotten when it exits (heard again, it enters again), and at most
/// `maximumRegionsHeard` are monitored at once: UUIDs cost nothing to invent, and each one kept would
/// hold memory for the rest of a scan. Otherwise regions come from `add(_:)`.
///
/// `observe(_:report:)` costs at most one UUID lookup (none while sightings keep to the UUID last found),
/// plus at most two integer lookups when that UUID has major or minor regions, and allocates nothing unless
/// an event happens; one of the UUID last found whose only region is already inside touches no record.
/// `observe(_:)` collects the events in an array.
public struct RegionMonitor: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Seconds of silence before a region is exited.
        public var exitTimeout: Double
        /// Monitor every proximity UUID heard as a region of its own.
        public var monitorsEveryUUIDHeard: Bool
        /// With `monitorsEveryUUIDHeard`, the most UUIDs monitored at once: one heard while this many are
        /// inside is not monitored until one exits.
        public var maximumRegionsHeard: Int

        public init(exitTimeout: Double = 10, monitorsEveryUUIDHeard: Bool = false, maximumRegionsHeard: Int = 1_000) {
            self.exitTimeout = exitTimeout
            self.monitorsEveryUUIDHeard = monitorsEveryUUIDHeard
            self.maximumRegionsHeard = maximumRegionsHeard
        }
    }

    private struct Record: Sendable {
        var region: BeaconRegion
        /// Order of addition: breaks ties between regions exiting at the same moment.
        var serial: Int
        var state: RegionState = .unknown
        /// The last matching sighting, or when monitoring began (for `.unknown`); nil before any time.
        var lastHeard: Double?
        /// An entry for this region is in the deadline queue.
        var queued = false
        /// Added because its UUID was heard (`monitorsEveryUUIDHeard`): forgotten when it exits.
        var heard = false
    }

    /// What regions are grouped by: an iBeacon UUID, or an Eddystone namespace (as a constraint holds it).
    private struct GroupKey: Hashable, Sendable {
        var uuid: UUID
        var isEddystone: Bool

        init(_ constraint: BeaconIdentityConstraint) {
            uuid = constraint.uuid
            isEddystone = constraint.isEddystone
        }

        init(_ identity: BeaconIdentity, isEddystone: Bool) {
            let storage = Self.storage(identity, isEddystone: isEddystone)
            uuid = BeaconIdentity(uuidStorage: storage, major: 0, minor: 0).uuid
            self.isEddystone = isEddystone
        }

        /// The UUID's words of the group `identity` is in: an Eddystone-UID identity's namespace is its first 10
        /// bytes, and the key keeps only those.
        @inline(__always)
        static func storage(_ identity: BeaconIdentity, isEddystone: Bool) -> (UInt64, UInt64) {
            let storage = identity.uuidStorage
            guard isEddystone else { return storage }
            return (storage.0, UInt64(bigEndian: UInt64(bigEndian: storage.1) & ~0xFFFF_FFFF_FFFF))
        }
    }

    /// The regions of one proximity UUID (or Eddystone namespace), reachable with integer keys once it is found.
    private struct UUIDRegions: Sendable {
        let key: GroupKey
        var whole: Record?
        var byMajor: [UInt16: Record] = [:]
        var byMajorMinor: [UInt32: Record] = [:]
        /// Eddystone regions of one beacon, by instance.
        var byInstance: [UInt64: Record] = [:]

        var isEmpty: Bool { whole == nil && byMajor.isEmpty && byMajorMinor.isEmpty && byInstance.isEmpty }

        /// Whether a sighting of this UUID can only note its time in `whole`: no other region, and inside.
        var isOnlyWholeInside: Bool {
            byMajor.isEmpty && byMajorMinor.isEmpty && byInstance.isEmpty && whole?.state == .inside
        }

        /// Notes `time` as the last sighting of every region of this UUID that `identity` matches. Whether one
        /// of them is not `.inside`: then `hear(_:_:)` enters it. Inlined: every sighting of a monitored UUID
        /// comes here.
        @inline(__always)
        mutating func hear(_ identity: BeaconIdentity, at time: Double) -> Bool {
            var entering = false
            func note(_ record: inout Record) {
                record.lastHeard = time
                entering = entering || record.state != .inside
            }
            if whole != nil { note(&whole!) }
            if !byMajor.isEmpty, byMajor[identity.major] != nil { note(&byMajor[identity.major]!) }
            if !byMajorMinor.isEmpty {
                let key = UInt32(identity.major) << 16 | UInt32(identity.minor)
                if byMajorMinor[key] != nil { note(&byMajorMinor[key]!) }
            }
            if !byInstance.isEmpty, byInstance[identity.eddystoneUID.instanceBits] != nil {
                note(&byInstance[identity.eddystoneUID.instanceBits]!)
            }
            return entering
        }

        /// Runs `body` on every region of this UUID that `identity` matches.
        mutating func hear(_ identity: BeaconIdentity, _ body: (inout Record) -> Void) {
            if whole != nil { body(&whole!) }
            if !byMajor.isEmpty, byMajor[identity.major] != nil { body(&byMajor[identity.major]!) }
            if !byMajorMinor.isEmpty {
                let key = UInt32(identity.major) << 16 | UInt32(identity.minor)
                if byMajorMinor[key] != nil { body(&byMajorMinor[key]!) }
            }
            if !byInstance.isEmpty, byInstance[identity.eddystoneUID.instanceBits] != nil {
                body(&byInstance[identity.eddystoneUID.instanceBits]!)
            }
        }

        mutating func forEach(_ body: (inout Record) -> Void) {
            if whole != nil { body(&whole!) }
            for key in byMajor.keys { body(&byMajor[key]!) }
            for key in byMajorMinor.keys { body(&byMajorMinor[key]!) }
            for key in byInstance.keys { body(&byInstance[key]!) }
        }
    }

    private struct Deadline: Sendable {
        var time: Double
        var serial: Int
        var region: BeaconIdentityConstraint

        func precedes(_ other: Deadline) -> Bool { (time, serial) < (other.time, other.serial) }
    }

    public let configuration: Configuration
    /// The regions by UUID: an array, so a sighting updates its group in place, and the index of each
    /// UUID's group in it.
    private var groups: [UUIDRegions] = []
    private var groupIndex: [GroupKey: Int] = [:]
    /// A group a recent sighting found, by its key's words (`GroupKey.storage`): a store's beacons share one or a
    /// few UUIDs (or namespaces), and hashing a UUID for every sighting was a tenth of a replay.
    private struct LastGroup {
        var uuid: (UInt64, UInt64)
        var index: Int
        /// The group's, as of the last sighting that went through it.
        var isOnlyWholeInside = false
        /// The time of the latest sighting of the group while it `isOnlyWholeInside`, not yet written to its
        /// `whole` record: such a sighting only keeps that region alive, and touching the group's record for each
        /// cost a tenth of the monitor. `settleHeard()` writes it before anything reads it or changes the group.
        var unsettledHeard: Double?
    }

    /// The group the last iBeacon sighting found, and the one the last Eddystone-UID sighting found: a store with
    /// both has its UUID and its namespace taking turns. `remove`, which moves a group, clears them.
    private var lastGroup: LastGroup?
    private var lastEddystoneGroup: LastGroup?
    /// The last few groups found, looked through before `groupIndex`. `remove` clears it too.
    private var recentGroups: [(uuid: (UInt64, UInt64), isEddystone: Bool, index: Int)] = []
    private var deadlines: [Deadline] = []  // a binary min-heap
    private var serials = 0
    /// How many regions were added because their UUID was heard.
    private var regionsHeard = 0
    /// The latest time seen, from sightings or `advance(to:)`.
    public private(set) var now: Double?

    public init(configuration: Configuration = Configuration()) throws(InvalidBeaconConfiguration) {
        guard configuration.exitTimeout.isFinite, configuration.exitTimeout >= 0 else {
            throw InvalidBeaconConfiguration(
                "exit timeout must be a number of seconds of at least 0, got \(configuration.exitTimeout)")
        }
        self.configuration = configuration
    }

    /// Every monitored region, in the order they were added.
    public var regions: [BeaconRegion] {
        var records: [Record] = []
        for group in groups {
            if let whole = group.whole { records.append(whole) }
            records.append(contentsOf: group.byMajor.values)
            records.append(contentsOf: group.byMajorMinor.values)
            records.append(contentsOf: group.byInstance.values)
        }
        return records.sorted { $0.serial < $1.serial }.map(\.region)
    }

    /// Starts monitoring `region`, or changes its notify flags if it is already monitored (its state is
    /// kept). A new region starts `.unknown`.
    public mutating func add(_ region: BeaconRegion) {
        add(region, heard: false)
    }

    private mutating func add(_ region: BeaconRegion, heard: Bool) {
        settleHeard()
        // The region may join one of those groups.
        lastGroup?.isOnlyWholeInside = false
        lastEddystoneGroup?.isOnlyWholeInside = false
        let constraint = region.constraint
        var wasHeard = false
        if withRecord(constraint, {
            wasHeard = $0.heard
            $0.region = region
            $0.heard = false  // added on purpose now: kept
        }) != nil {
            if wasHeard { regionsHeard -= 1 }
            return
        }
        var record = Record(region: region, serial: serials, lastHeard: now, heard: heard)
        serials += 1
        if heard { regionsHeard += 1 }
        if let now {
            record.queued = true
            push(Deadline(time: now + configuration.exitTimeout, serial: record.serial, region: constraint))
        }
        store(record)
    }

    /// Stops monitoring a region; no event is reported for it afterwards.
    public mutating func remove(_ constraint: BeaconIdentityConstraint) {
        settleHeard()
        guard let index = groupIndex[GroupKey(constraint)] else { return }
        switch (constraint.major, constraint.minor, constraint.instance) {
        case (nil, _, nil):
            if groups[index].whole?.heard == true { regionsHeard -= 1 }
            groups[index].whole = nil
        case (nil, _, let instance?): groups[index].byInstance[instance] = nil
        case (let major?, nil, _): groups[index].byMajor[major] = nil
        case (let major?, let minor?, _): groups[index].byMajorMinor[Self.key(major, minor)] = nil
        }
        guard groups[index].isEmpty else { return }
        // The last group takes the place of the removed one.
        groupIndex[GroupKey(constraint)] = nil
        let last = groups.removeLast()
        if index < groups.count {
            groups[index] = last
            groupIndex[last.key] = index
        }
        lastGroup = nil
        lastEddystoneGroup = nil
        recentGroups.removeAll()
    }

    public func state(for constraint: BeaconIdentityConstraint) -> RegionState {
        guard let index = groupIndex[GroupKey(constraint)] else { return .unknown }
        let group = groups[index]
        switch (constraint.major, constraint.minor, constraint.instance) {
        case (nil, _, nil): return group.whole?.state ?? .unknown
        case (nil, _, let instance?): return group.byInstance[instance]?.state ?? .unknown
        case (let major?, nil, _): return group.byMajor[major]?.state ?? .unknown
        case (let major?, let minor?, _): return group.byMajorMinor[Self.key(major, minor)]?.state ?? .unknown
        }
    }

    /// Core Location's `requestState(for:)`: advances to `time`, then reports the region's state as an
    /// event (after any exits that fell due on the way).
    public mutating func requestState(for constraint: BeaconIdentityConstraint, at time: Double) -> [RegionEvent] {
        var events = advance(to: time)
        events.append(RegionEvent(kind: .state(state(for: constraint)), region: constraint, time: now ?? time))
        return events
    }

    /// Records one sighting: exits that fell due before it, then entries it causes.
    public mutating func observe(_ sighting: BeaconSighting) -> [RegionEvent] {
        var events: [RegionEvent] = []
        observe(sighting) { events.append($0) }
        return events
    }

    /// `observe(_:)` handing each event to `report` as it happens, with no array to return for the many
    /// sightings that cause none.
    public mutating func observe(_ sighting: BeaconSighting, report: (RegionEvent) -> Void) {
        guard sighting.time.isFinite else { return }
        advance(to: sighting.time, report: report)
        let kind = sighting.frame.kind
        // Eddystone-EID beacons are no region's until a resolver names them; TLM frames name no beacon.
        guard kind != .eddystoneEID, kind != .eddystoneTelemetry else { return }
        let identity = sighting.frame.identity
        if kind == .eddystoneUID {
            let storage = GroupKey.storage(identity, isEddystone: true)
            if let last = lastEddystoneGroup, last.isOnlyWholeInside, last.uuid == storage {
                lastEddystoneGroup!.unsettledHeard = now
                return
            }
            return hear(identity, isEddystone: true, report: report)
        }
        if let last = lastGroup, last.isOnlyWholeInside, last.uuid == identity.uuidStorage {
            lastGroup!.unsettledHeard = now
            return
        }
        hear(identity, isEddystone: false, report: report)
    }

    /// `observe(_:report:)` past its common case; out of line, which keeps that case's function small.
    @inline(never)
    private mutating func hear(_ identity: BeaconIdentity, isEddystone: Bool, report: (RegionEvent) -> Void) {
        let group: Int
        let storage = GroupKey.storage(identity, isEddystone: isEddystone)
        if let last = isEddystone ? lastEddystoneGroup : lastGroup, last.uuid == storage {
            group = last.index
        } else {
            settleHeard()
            guard let found = findGroup(identity, isEddystone: isEddystone) else { return }
            group = found
        }
        // Most sightings only keep regions alive that are already inside.
        if groups[group].hear(identity, at: now!) { enter(group, identity, report: report) }
        let isOnlyWholeInside = groups[group].isOnlyWholeInside
        if isEddystone {
            lastEddystoneGroup?.isOnlyWholeInside = isOnlyWholeInside
        } else {
            lastGroup?.isOnlyWholeInside = isOnlyWholeInside
        }
    }

    /// Writes the last groups' `unsettledHeard` to the records they belong to.
    private mutating func settleHeard() {
        if let last = lastGroup, let time = last.unsettledHeard {
            groups[last.index].whole!.lastHeard = time
            lastGroup!.unsettledHeard = nil
        }
        if let last = lastEddystoneGroup, let time = last.unsettledHeard {
            groups[last.index].whole!.lastHeard = time
            lastEddystoneGroup!.unsettledHeard = nil
        }
    }

    /// The index of the group of `identity`'s UUID (or namespace), which becomes the last one found; with
    /// `monitorsEveryUUIDHeard`, a UUID or namespace heard for the first time becomes a region while there is room.
    private mutating func findGroup(_ identity: BeaconIdentity, isEddystone: Bool) -> Int? {
        let storage = GroupKey.storage(identity, isEddystone: isEddystone)
        if let recent = recentGroups.first(where: { $0.uuid == storage && $0.isEddystone == isEddystone }) {
            remember(LastGroup(uuid: storage, index: recent.index), isEddystone: isEddystone)
            return recent.index
        }
        let key = GroupKey(identity, isEddystone: isEddystone)
        if groupIndex[key] == nil {
            guard configuration.monitorsEveryUUIDHeard, regionsHeard < configuration.maximumRegionsHeard else {
                return nil
            }
            let region =
                isEddystone
                ? BeaconIdentityConstraint(namespace: identity.eddystoneUID.namespace)
                : BeaconIdentityConstraint(uuid: key.uuid)
            add(BeaconRegion(region), heard: true)
        }
        let index = groupIndex[key]!
        remember(LastGroup(uuid: storage, index: index), isEddystone: isEddystone)
        if recentGroups.count == 4 { recentGroups.removeFirst() }
        recentGroups.append((storage, isEddystone, index))
        return index
    }

    private mutating func remember(_ group: LastGroup, isEddystone: Bool) {
        if isEddystone { lastEddystoneGroup = group } else { lastGroup = group }
    }

    /// Enters the regions of `group` that `identity` matches and are not inside yet.
    private mutating func enter(_ group: Int, _ identity: BeaconIdentity, report: (RegionEvent) -> Void) {
        let time = now!
        let timeout = configuration.exitTimeout
        var newDeadlines: [Deadline] = []
        groups[group].hear(identity) { record in
            guard record.state != .inside else { return }
            record.state = .inside
            if record.region.notifyOnEntry {
                report(RegionEvent(kind: .enter, region: record.region.constraint, time: time))
            }
            if !record.queued {
                record.queued = true
                newDeadlines.append(
                    Deadline(time: time + timeout, serial: record.serial, region: record.region.constraint))
            }
        }
        for deadline in newDeadlines { push(deadline) }
    }

    /// Moves time forward to `time` (earlier times are ignored) and reports the exits that fell due,
    /// in time order.
    public mutating func advance(to time: Double) -> [RegionEvent] {
        var events: [RegionEvent] = []
        advance(to: time) { events.append($0) }
        return events
    }

    /// `advance(to:)` handing each exit to `report`.
    public mutating func advance(to time: Double, report: (RegionEvent) -> Void) {
        guard time.isFinite else { return }
        guard let previous = now else {
            now = time
            startMonitoring(at: time)
            return
        }
        now = max(previous, time)
        if let first = deadlines.first, first.time <= time { exit(by: time, report: report) }
    }

    /// Pops the deadlines due by `time`: the regions not heard since exit, the others wait for their new one.
    /// Out of line: few sightings have a deadline due.
    @inline(never)
    private mutating func exit(by time: Double, report: (RegionEvent) -> Void) {
        settleHeard()
        // Its region may exit.
        lastGroup?.isOnlyWholeInside = false
        lastEddystoneGroup?.isOnlyWholeInside = false
        let timeout = configuration.exitTimeout
        while let first = deadlines.first, first.time <= time {
            popFirst()
            var requeue: Deadline?
            var forget = false
            withRecord(first.region) { record in
                guard record.serial == first.serial, let lastHeard = record.lastHeard else { return }
                let due = lastHeard + timeout
                if due > first.time {
                    // Heard since this deadline was set: wait for the new one.
                    requeue = Deadline(time: due, serial: record.serial, region: first.region)
                    return
                }
                record.queued = false
                if record.state == .inside && record.region.notifyOnExit {
                    report(RegionEvent(kind: .exit, region: first.region, time: due))
                }
                record.state = .outside
                forget = record.heard
            }
            if let requeue { push(requeue) }
            if forget { remove(first.region) }
        }
    }

    /// Regions added before any time was known start their clock now.
    private mutating func startMonitoring(at time: Double) {
        var pending: [Deadline] = []
        for index in groups.indices {
            groups[index].forEach { record in
                record.lastHeard = time
                record.queued = true
                pending.append(
                    Deadline(
                        time: time + configuration.exitTimeout, serial: record.serial,
                        region: record.region.constraint))
            }
        }
        for deadline in pending { push(deadline) }
    }

    private static func key(_ major: UInt16, _ minor: UInt16) -> UInt32 { UInt32(major) << 16 | UInt32(minor) }

    private mutating func store(_ record: Record) {
        let constraint = record.region.constraint
        let key = GroupKey(constraint)
        let index = groupIndex[key] ?? groups.count
        if index == groups.count {
            groupIndex[key] = index
            groups.append(UUIDRegions(key: key))
        }
        switch (constraint.major, constraint.minor, constraint.instance) {
        case (nil, _, nil): groups[index].whole = record
        case (nil, _, let instance?): groups[index].byInstance[instance] = record
        case (let major?, nil, _): groups[index].byMajor[major] = record
        case (let major?, let minor?, _): groups[index].byMajorMinor[Self.key(major, minor)] = record
        }
    }

    /// Runs `body` on the record of `constraint` in place; nil when it is not monitored.
    @discardableResult
    private mutating func withRecord(_ constraint: BeaconIdentityConstraint, _ body: (inout Record) -> Void) -> Void? {
        guard let index = groupIndex[GroupKey(constraint)] else { return nil }
        switch (constraint.major, constraint.minor, constraint.instance) {
        case (nil, _, nil):
            guard groups[index].whole != nil else { return nil }
            return body(&groups[index].whole!)
        case (nil, _, let instance?):
            guard groups[index].byInstance[instance] != nil else { return nil }
            return body(&groups[index].byInstance[instance]!)
        case (let major?, nil, _):
            guard groups[index].byMajor[major] != nil else { return nil }
            return body(&groups[index].byMajor[major]!)
        case (let major?, let minor?, _):
            let key = Self.key(major, minor)
            guard groups[index].byMajorMinor[key] != nil else { return nil }
            return body(&groups[index].byMajorMinor[key]!)
        }
    }

    // The deadline heap: at most one entry per region, re-queued lazily when the region was heard since.

    private mutating func push(_ deadline: Deadline) {
        deadlines.append(deadline)
        var child = deadlines.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard deadlines[child].precedes(deadlines[parent]) else { break }
            deadlines.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popFirst() {
        let last = deadlines.removeLast()
        guard !deadlines.isEmpty else { return }
        deadlines[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < deadlines.count && deadlines[left].precedes(deadlines[smallest]) { smallest = left }
            if right < deadlines.count && deadlines[right].precedes(deadlines[smallest]) { smallest = right }
            guard smallest != parent else { return }
            deadlines.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
