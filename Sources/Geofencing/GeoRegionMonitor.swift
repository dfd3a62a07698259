/// A circular geographic region: Core Location's `CLCircularRegion` (a centre, a radius in metres and
/// an identifier).
public struct GeoRegion: Hashable, Sendable {
    public var identifier: String
    public var center: GeoCoordinate
    public var radius: Double

    public init(identifier: String, center: GeoCoordinate, radius: Double) {
        self.identifier = identifier
        self.center = center
        self.radius = radius
    }
}

/// A boundary crossing of a geographic region.
public struct GeoRegionEvent: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable {
        case enter, exit
    }

    public var kind: Kind
    public var identifier: String
    /// Seconds on the fixes' clock. An exit is stamped when the shopper had been beyond the cushion
    /// for `exitDelay`, not when the monitor noticed it.
    public var time: Double

    public init(kind: Kind, identifier: String, time: Double) {
        self.kind = kind
        self.identifier = identifier
        self.time = time
    }
}

/// A region or configuration the monitor cannot use.
public struct InvalidGeoRegion: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String

    init(_ description: String) { self.description = description }
}

/// Geographic region monitoring from position fixes, with a cushion against flapping at the edge.
///
/// A region is entered by the first fix within its radius. It is exited only once the shopper has
/// been more than `radius + exitMargin` away for `exitDelay` seconds without a fix back within that
/// distance; GPS noise around the boundary therefore produces no events. Radii are clamped to
/// `maximumRadius`. A region added while the shopper is inside enters at the next fix.
///
/// Any number of regions: they are indexed in a grid of `cellDegrees` cells, so a fix costs a lookup
/// of its cell plus a distance per region in that cell and per region the shopper is inside, not a
/// distance per region. Time comes only from the fixes and `advance(to:)`.
public struct GeoRegionMonitor: Sendable {
    public struct Configuration: Hashable, Sendable {
        /// Larger radii are clamped to this (Core Location's `maximumRegionMonitoringDistance`).
        public var maximumRadius: Double
        /// Metres beyond the radius before leaving counts.
        public var exitMargin: Double
        /// Seconds beyond `radius + exitMargin` before the region is exited.
        public var exitDelay: Double

        public init(maximumRadius: Double = 10_000, exitMargin: Double = 50, exitDelay: Double = 20) {
            self.maximumRadius = maximumRadius
            self.exitMargin = exitMargin
            self.exitDelay = exitDelay
        }
    }

    private struct Record: Sendable {
        var region: GeoRegion
        var cells: [Int]
        var inside = false
        /// Since when the shopper has been beyond the cushion, while inside.
        var outsideSince: Double?
    }

    /// Grid cells of 0.02 degrees (about 2.2 km north-south): a store's fence covers one to four.
    static let cellDegrees = 0.02
    private static let latitudeCells = Int((180 / cellDegrees).rounded())
    private static let longitudeCells = Int((360 / cellDegrees).rounded())

    public let configuration: Configuration
    private var records: [Record?] = []
    private var freeSlots: [Int] = []
    private var slots: [String: Int] = [:]
    private var grid: [Int: [Int]] = [:]
    private var inside: Set<Int> = []
    /// The latest time seen, from fixes or `advance(to:)`.
    public private(set) var now: Double?

    public init(configuration: Configuration = Configuration()) throws(InvalidGeoRegion) {
        for (name, value) in [
            ("maximum radius", configuration.maximumRadius), ("exit margin", configuration.exitMargin),
            ("exit delay", configuration.exitDelay),
        ] where !(value.isFinite && value >= 0) {
            throw InvalidGeoRegion("\(name) must be a finite number of at least 0, got \(value)")
        }
        self.configuration = configuration
    }

    public var count: Int { slots.count }

    /// The monitored regions, radii clamped, by identifier.
    public var regions: [GeoRegion] {
        slots.values.compactMap { records[$0]?.region }.sorted { $0.identifier < $1.identifier }
    }

    /// Identifiers of the regions the shopper is in, sorted.
    public var insideRegions: [String] {
        inside.compactMap { records[$0]?.region.identifier }.sorted()
    }

    public func isInside(_ identifier: String) -> Bool {
        slots[identifier].map { records[$0]?.inside == true } ?? false
    }

    /// Starts monitoring `region`, or moves it if its identifier is monitored (its state is kept: the
    /// next fix decides).
    public mutating func add(_ region: GeoRegion) throws(InvalidGeoRegion) {
        guard region.center.isValid else {
            throw InvalidGeoRegion(
                "region \(region.identifier): centre \(region.center) is not a valid coordinate")
        }
        guard region.radius.isFinite, region.radius >= 0 else {
            throw InvalidGeoRegion(
                "region \(region.identifier): radius must be at least 0 metres, got \(region.radius)")
        }
        var region = region
        region.radius = min(region.radius, configuration.maximumRadius)
        var record = Record(
            region: region, cells: Self.cells(BoundingBox(center: region.center, radius: region.radius)))
        let slot: Int
        if let existing = slots[region.identifier], let old = records[existing] {
            slot = existing
            unindex(slot, old.cells)
            record.inside = old.inside
            record.outsideSince = old.outsideSince
        } else if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = records.count
            records.append(nil)
        }
        records[slot] = record
        slots[region.identifier] = slot
        for cell in record.cells { grid[cell, default: []].append(slot) }
    }

    /// Stops monitoring a region; no event is reported for it afterwards.
    public mutating func remove(_ identifier: String) {
        guard let slot = slots.removeValue(forKey: identifier), let record = records[slot] else {
            return
        }
        unindex(slot, record.cells)
        records[slot] = nil
        inside.remove(slot)
        freeSlots.append(slot)
    }

    /// Records one fix: exits that fell due before it, then what the position changes.
    public mutating func observe(_ fix: GeoFix) -> [GeoRegionEvent] {
        guard fix.time.isFinite, fix.coordinate.isValid, now.map({ fix.time >= $0 }) ?? true else {
            return []
        }
        var events = advance(to: fix.time)
        let time = fix.time
        for slot in inside {
            let region = records[slot]!.region
            let beyond =
                GreatCircle.distance(fix.coordinate, region.center) > region.radius
                + configuration.exitMargin
            if beyond {
                if records[slot]!.outsideSince == nil { records[slot]!.outsideSince = time }
            } else {
                records[slot]!.outsideSince = nil
            }
        }
        events += exits(dueBy: time)
        var entered: [GeoRegionEvent] = []
        let row = Self.latitudeIndex(fix.coordinate.latitude)
        let cell = row * Self.longitudeCells + Self.longitudeIndex(fix.coordinate.longitude)
        let candidates = (grid[cell] ?? []) + (grid[Self.wholeRow(row)] ?? [])
        for slot in candidates where !records[slot]!.inside {
            let region = records[slot]!.region
            if GreatCircle.distance(fix.coordinate, region.center) <= region.radius {
                records[slot]!.inside = true
                inside.insert(slot)
                entered.append(GeoRegionEvent(kind: .enter, identifier: region.identifier, time: time))
            }
        }
        events += entered.sorted { $0.identifier < $1.identifier }
        return events
    }

    /// Moves time on to `time`: the regions whose exit fell due by then, in order.
    public mutating func advance(to time: Double) -> [GeoRegionEvent] {
        guard time.isFinite, now.map({ time >= $0 }) ?? true else { return [] }
        now = time
        return exits(dueBy: time)
    }

    private mutating func exits(dueBy time: Double) -> [GeoRegionEvent] {
        var exits: [GeoRegionEvent] = []
        for slot in inside {
            guard let since = records[slot]!.outsideSince, since + configuration.exitDelay <= time else {
                continue
            }
            records[slot]!.inside = false
            records[slot]!.outsideSince = nil
            exits.append(
                GeoRegionEvent(
                    kind: .exit, identifier: records[slot]!.region.identifier,
                    time: since + configuration.exitDelay))
        }
        for exit in exits { inside.remove(slots[exit.identifier]!) }
        return exits.sorted { ($0.time, $0.identifier) < ($1.time, $1.identifier) }
    }

    // MARK: grid

    private mutating func unindex(_ slot: Int, _ cells: [Int]) {
        for cell in cells {
            grid[cell]?.removeAll { $0 == slot }
            if grid[cell]?.isEmpty == true { grid[cell] = nil }
        }
    }

    private static func latitudeIndex(_ latitude: Double) -> Int {
        min(latitudeCells - 1, max(0, Int(((latitude + 90) / cellDegrees).rounded(.down))))
    }

    private static func longitudeIndex(_ longitude: Double) -> Int {
        let index = Int(((longitude + 180) / cellDegrees).rounded(.down))
        return (index % longitudeCells + longitudeCells) % longitudeCells
    }

    /// Every cell the box overlaps; a box around a quarter of the way round (near a pole) takes its
    /// latitude rows whole instead.
    private static func cells(_ box: BoundingBox) -> [Int] {
        let rows = latitudeIndex(box.minLatitude)...latitudeIndex(box.maxLatitude)
        let low = longitudeIndex(box.minLongitude)
        var high = longitudeIndex(box.maxLongitude)
        if high < low || (box.wrapsLongitude && high == low) { high += longitudeCells }
        let fullCircle = box.minLongitude <= -180 && box.maxLongitude >= 180
        if fullCircle || high - low >= longitudeCells / 4 {
            return rows.map { wholeRow($0) }
        }
        var cells: [Int] = []
        for row in rows {
            for column in low...high { cells.append(row * longitudeCells + column % longitudeCells) }
        }
        return cells
    }

    /// The key of a whole latitude row, apart from every cell's key.
    private static func wholeRow(_ row: Int) -> Int { -1 - row }
}
