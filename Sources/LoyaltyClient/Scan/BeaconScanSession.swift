import Beacons

/// Ranging, monitoring and offers, fed beacon sightings and clock ticks from a capture or a radio alike;
/// what happens goes to the output.
public struct BeaconScanSession {
    public var ranger: Ranger
    public var monitor: RegionMonitor
    public let offers: OfferSession
    public let output: ScanOutput
    /// Resolves secure beacons' identities through the service; nil when the scan does not (no account).
    public let secure: SecureBeaconResolver?
    private var syncWarned: Bool
    /// The catalog revision whose retailers the monitor watches; nil when its regions do not follow the
    /// catalog (given on the command line, or every UUID heard).
    private var loadedRevision: Int?

    /// `syncWarned`: a sync before the scan already failed and said so. With `followsCatalog`, the monitor's
    /// regions are the retailers the cache knows, reloaded after a sync changes the catalog.
    public init(
        ranger: Ranger, monitor: RegionMonitor, offers: OfferSession, output: ScanOutput, syncWarned: Bool,
        followsCatalog: Bool = false, secure: SecureBeaconResolver? = nil
    ) {
        self.secure = secure
        self.ranger = ranger
        self.monitor = monitor
        self.offers = offers
        self.output = output
        self.syncWarned = syncWarned
        loadedRevision = followsCatalog ? offers.catalogRevision : nil
    }

    /// Monitors `regions`, or without any the retailers the cache knows (as syncs change them), or without
    /// those every UUID heard.
    public init(
        offers: OfferSession, regions: [BeaconIdentityConstraint], ranging: Ranger.Configuration, exitTimeout: Double,
        output: ScanOutput, syncWarned: Bool, secure: SecureBeaconResolver? = nil
    ) throws(InvalidBeaconConfiguration) {
        let monitored = regions.isEmpty ? offers.regions : regions
        var monitor = try RegionMonitor(
            configuration: .init(exitTimeout: exitTimeout, monitorsEveryUUIDHeard: monitored.isEmpty))
        for region in monitored { monitor.add(BeaconRegion(region)) }
        var ranger = try Ranger(configuration: ranging)
        ranger.knownUUIDs = Set(regions.map(\.uuid) + offers.regions.map(\.uuid))
        self.init(
            ranger: ranger, monitor: monitor, offers: offers, output: output, syncWarned: syncWarned,
            followsCatalog: regions.isEmpty && !monitored.isEmpty, secure: secure)
    }

    public mutating func observe(_ heard: BeaconSighting) throws {
        reloadRegionsIfSynced()
        // A secure beacon's identity, once the service resolved it, is its beacon.
        let sighting = try secure?.resolve(heard) ?? heard
        try secure?.advance(to: sighting.time)
        let output = output
        monitor.observe(sighting) { output.report($0) }
        if let snapshot = ranger.observe(sighting) { try report(snapshot) }
    }

    /// The clock tick: what fell due by `time`, region exits and the ranging snapshot.
    public mutating func advance(to time: Double) throws {
        reloadRegionsIfSynced()
        try secure?.advance(to: time)
        let output = output
        monitor.advance(to: time) { output.report($0) }
        if let snapshot = ranger.advance(to: time) { try report(snapshot) }
    }

    /// The machine resumed from a suspend at `time` (live time, which leaves the sleep out): regions whose exit
    /// fell due before the sleep exit now, the others keep the silence they had, as time asleep is not time
    /// unheard; the ranging shows no beacon from before the sleep as current.
    public mutating func resume(at time: Double) throws {
        try advance(to: time)
        ranger.resume()
    }

    /// After a sync that changed the catalog (this session's or the stores'), monitors the retailers the
    /// cache knows now: new ones added, removed ones dropped (without an exit), the rest kept as they are.
    private mutating func reloadRegionsIfSynced() {
        guard let loaded = loadedRevision, loaded != offers.catalogRevision else { return }
        reloadRegions()
    }

    /// Out of line: the check above runs for every sighting.
    @inline(never)
    private mutating func reloadRegions() {
        loadedRevision = offers.catalogRevision
        let current = Set(offers.regions)
        for region in monitor.regions where !current.contains(region.constraint) { monitor.remove(region.constraint) }
        for region in offers.regions { monitor.add(BeaconRegion(region)) }
        ranger.knownUUIDs = Set(offers.regions.map(\.uuid))
    }

    /// Everything due up to `time`, and the last snapshot: the end of a replay or a scan.
    public mutating func finish(at time: Double) throws {
        try secure?.finish()
        monitor.advance(to: time) { output.report($0) }
        try report(ranger.snapshot(at: time))
        try output.beaconsFinished()
    }

    private mutating func report(_ snapshot: RangingSnapshot) throws {
        try output.snapshotDue(snapshot)
        offers.syncIfDue(warned: &syncWarned, output: output)
        try output.report(snapshot, shown: try offers.update(snapshot, show: output.show))
    }
}
