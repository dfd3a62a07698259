import Beacons
import Foundation
import Geofencing
import LoyaltyAPI
import Testing

@testable import LoyaltyClient

/// Matey's with its sushi offer at beacon 1:1 and one store, the Carnaby Street shop.
private enum Matey {
    static let uuid = UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!
    static let retailer = CatalogRetailer(id: UUID(), name: "Matey's", uuid: uuid)
    static let epoch = Date(timeIntervalSince1970: 1_800_000_000)
    static let sushi = BeaconIdentity(uuid: uuid, major: 1, minor: 1)
    static let shop = GeoCoordinate(latitude: 51.5133, longitude: -0.1389)

    /// An offline session over a fresh cache holding the catalog.
    static func offers() throws -> OfferSession {
        let cache = try OfferCache(file: try temporaryDirectory().appendingPathComponent("cache.sqlite"))
        let offer = Offer(
            id: UUID(), retailerID: retailer.id, major: 1, minor: 1, title: "30% off sushi", updatedAt: epoch)
        let store = RetailStore(
            id: UUID(), retailerID: retailer.id, storeID: "carnaby", name: "Carnaby Street", latitude: shop.latitude,
            longitude: shop.longitude, radiusMetres: 100, updatedAt: epoch)
        try cache.apply(
            CatalogPage(
                cursor: "c1", full: true, serverTime: epoch, retailers: [retailer], offers: [offer], removed: [],
                stores: [store]),
            etag: nil, serverTimeOffset: 0)
        return try OfferSession(cache: cache, holding: .dwell(5), sync: nil, deviceClock: { epoch })
    }

    static func beacons(_ offers: OfferSession, output: ScanOutput) throws -> BeaconScanSession {
        var monitor = try RegionMonitor(configuration: .init(exitTimeout: 10))
        for region in offers.regions { monitor.add(BeaconRegion(region)) }
        return BeaconScanSession(
            ranger: try Ranger(), monitor: monitor, offers: offers, output: output, syncWarned: false)
    }

    static func stores(_ offers: OfferSession, output: ScanOutput) throws -> GeofenceSession {
        GeofenceSession(
            monitor: try GeoRegionMonitor(configuration: .init(exitMargin: 50, exitDelay: 20)), offers: offers,
            radiusKilometres: 10, output: output)
    }

    static func sighting(at time: Double, rssi: Int8 = -55) -> BeaconSighting {
        BeaconSighting(
            frame: BeaconFrame(kind: .iBeacon, identity: sushi, measuredPower: -59),
            address: BluetoothAddress(wire: (1, 2, 3, 4, 5, 6)), rssi: rssi, time: time)
    }
}

/// What the sessions said, one line each, in order.
private final class RecordedOutput: ScanOutput {
    var lines: [String] = []
    var times: [Double] = []
    /// Each snapshot's time and the proximities it showed.
    var snapshots: [(time: Double, proximities: [Proximity])] = []

    func snapshotDue(_ snapshot: RangingSnapshot) {}
    func show(_ offer: OfferPresentation) -> () -> Void { {} }
    func report(_ event: RegionEvent) {
        lines.append("\(event.kind == .enter ? "enter" : "exit") \(event.region)")
        times.append(event.time)
    }
    func report(_ snapshot: RangingSnapshot, shown: OfferPresentation?) {
        snapshots.append((snapshot.time, snapshot.beacons.map(\.proximity)))
        lines.append("range \(snapshot.beacons.count)" + (shown.map { " offer \($0.offer.offer.title)" } ?? ""))
        times.append(snapshot.time)
    }
    func beaconsFinished() { lines.append("finished") }
    func report(_ event: GeoRegionEvent, store: ResolvedStore) {
        lines.append("\(event.kind.rawValue) \(store.store.storeID)")
        times.append(event.time)
    }
    func syncFailed(_ error: ClientError, syncing: ScanSync) { lines.append("sync failed") }
    func positionsEnded(_ end: PositionsEnd) { lines.append("positions ended") }
    func eventHandled() {}
}

/// A capture played as if a radio heard it: one callback per advertising event, until cancelled. A radio
/// keeps listening after the last event (`staysOn`) until it is cancelled.
private final class CaptureSource: SightingSource, @unchecked Sendable {
    let file: String
    let staysOn: Bool
    private let lock = NSLock()
    private var stopped = false
    var cancelled: Bool { lock.withLock { stopped } }

    init(_ file: String, staysOn: Bool = false) {
        self.file = file
        self.staysOn = staysOn
    }

    func listen(onResume: (Double) -> Void, _ onEvent: ([BeaconSighting], Double) -> Void) throws {
        let capture = try AdvertisingCapture(path: file)
        var event: [BeaconSighting] = []
        while !cancelled, let sighting = try capture.nextSighting() {
            if let time = event.first?.time, time != sighting.time {
                onEvent(event, time)
                event = []
            }
            event.append(sighting)
        }
        if !cancelled, let time = event.first?.time { onEvent(event, time) }
        while staysOn, !cancelled { usleep(1_000) }
    }

    func cancel() { lock.withLock { stopped = true } }
}

/// A radio that hears the sushi beacon every 0.1 s up to 3 s, then the machine sleeps and resumes at 3.5 s
/// (live time leaves the sleep out), then nothing is heard: a tick each second up to 15 s.
private final class SleepingRadio: SightingSource, @unchecked Sendable {
    func listen(onResume: (Double) -> Void, _ onEvent: ([BeaconSighting], Double) -> Void) throws {
        for tenth in 0...30 { onEvent([Matey.sighting(at: Double(tenth) / 10)], Double(tenth) / 10) }
        onResume(3.5)
        for second in 4...15 { onEvent([], Double(second)) }
    }

    func cancel() {}
}

/// A simulated walk past the sushi beacon: 12 m away, 1 m at 10 s, 12 m again at 20 s.
private func walkCapture() throws -> String {
    let file = try temporaryDirectory().appendingPathComponent("walk.btsnoop").path
    let walk = BeaconWalk(
        beacons: [
            BeaconWalk.Beacon(
                frame: BeaconFrame(kind: .iBeacon, identity: Matey.sushi, measuredPower: -59),
                address: BluetoothAddress(wire: (1, 0, 0x4C, 0x59, 0x4F, 0xC0)),
                path: [.init(time: 0, distance: 12), .init(time: 10, distance: 1), .init(time: 20, distance: 12)])
        ], advertisingInterval: 0.1, rssiNoise: 2, seed: 1)
    let writer = try BTSnoopWriter(path: file)
    try walk.write(to: writer, format: .legacy)
    try writer.close()
    return file
}

@Suite struct ScanSessionTests {
    @Test func sightingsAndClockTicksRangeMonitorAndShowTheOfferOnce() throws {
        let output = RecordedOutput()
        var session = try Matey.beacons(try Matey.offers(), output: output)
        for time in stride(from: 0.0, through: 3, by: 0.5) { try session.observe(Matey.sighting(at: time)) }
        #expect(output.lines.first == "enter \(Matey.uuid.uuidString)")
        #expect(output.lines.filter { $0.hasPrefix("range 1 offer 30% off sushi") }.count == 1)
        // Nothing heard after 3 s: the clock alone brings the snapshots and, 10 s later, the exit.
        let heard = output.lines.count
        for time in 4...20 { try session.advance(to: Double(time)) }
        let ticks = Array(output.lines[heard...])
        #expect(ticks.filter { $0.hasPrefix("range") }.count == 17)
        #expect(ticks.contains("exit \(Matey.uuid.uuidString)"))
        #expect(output.times[output.lines.firstIndex(of: "exit \(Matey.uuid.uuidString)")!] == 13)
        try session.finish(at: 20)
        #expect(output.lines.suffix(2) == ["range 0", "finished"])
        #expect(output.times == output.times.sorted())
    }

    /// Issue 47: after a resume the ranging shows no beacon from before the sleep as current (the tracking age,
    /// 5 s, would have kept it near until 8 s), and the region exits after 10 s of silence awake, not earlier.
    @Test func aResumeShowsNoBeaconFromBeforeTheSleepAndExitsNoRegionEarly() throws {
        let output = RecordedOutput()
        let scan = LiveScan(CombinedScan(beacons: try Matey.beacons(try Matey.offers(), output: output), stores: nil))
        try scan.run(SleepingRadio(), positions: nil)
        let before = try #require(output.snapshots.last { $0.time <= 3 })
        #expect(before.proximities.count == 1 && before.proximities[0] != .unknown)
        let after = output.snapshots.filter { $0.time > 3.5 }
        #expect(!after.isEmpty && after.allSatisfy { $0.proximities.allSatisfy { $0 == .unknown } }, "\(after)")
        let exit = "exit \(Matey.uuid.uuidString)"
        #expect(output.lines.filter { $0 == exit }.count == 1)
        #expect(output.lines.firstIndex(of: exit).map { output.times[$0] } == 13)
    }

    @Test func storesEnterOnTheFirstFixInsideAndExitAfterTheDelayBeyondTheMargin() throws {
        let output = RecordedOutput()
        var stores = try Matey.stores(try Matey.offers(), output: output)
        let away = GeoCoordinate(latitude: Matey.shop.latitude + 0.01, longitude: Matey.shop.longitude)
        for (time, point) in [(0.0, away), (10, Matey.shop), (20, Matey.shop), (30, away), (60, away)] {
            try stores.observe(GeoFix(time: time, coordinate: point))
        }
        #expect(output.lines == ["enter carnaby", "exit carnaby"])
        #expect(output.times == [10, 50])
    }

    /// The walk replayed with the shopper standing in the shop.
    @Test func aReplayMergesBeaconsAndPositionsInTimeOrder() throws {
        let file = try walkCapture()

        let output = RecordedOutput()
        let offers = try Matey.offers()
        var scan = CombinedScan(
            beacons: try Matey.beacons(offers, output: output), stores: try Matey.stores(offers, output: output))
        var statistics: CombinedScan.ReplayStatistics?
        var paced: [Double] = []
        try scan.replay(file, positions: .fixed(Matey.shop), pace: { paced.append($0) }) { statistics = $0 }
        #expect(Array(output.lines.prefix(2)) == ["enter \(Matey.uuid.uuidString)", "enter carnaby"])
        #expect(output.lines.contains { $0.hasSuffix("offer 30% off sushi") })
        #expect(output.lines.last == "finished")
        #expect(output.times == output.times.sorted())
        #expect(paced == paced.sorted() && paced.count == (statistics?.capture.beaconFrames ?? 0) + 1)
        #expect(statistics?.capture.beaconFrames ?? 0 > 150 && statistics?.log == nil)

        // The same capture, cut short: everything before the damage, the summary, then the error.
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        let cut = file + ".cut"
        try data.prefix(data.count - 7).write(to: URL(fileURLWithPath: cut))
        let again = RecordedOutput()
        var damaged = CombinedScan(beacons: try Matey.beacons(try Matey.offers(), output: again), stores: nil)
        var summarised = false
        #expect {
            try damaged.replay(cut, positions: nil) { _ in summarised = true }
        } throws: { error in
            guard case CombinedScan.ReplayError.damaged(let name, _)? = error as? CombinedScan.ReplayError else {
                return false
            }
            return name == cut
        }
        #expect(summarised && again.lines.last == "finished" && again.lines.count > 20)
        #expect(throws: CombinedScan.ReplayError.self) {
            try damaged.replay(file + ".missing", positions: nil) { _ in }
        }
    }

    /// A plain replay (no positions, no pacing) has a loop of its own: stopped part way (Ctrl-C), it ends as the
    /// merging loop does, at the last sighting fed, and feeds nothing after it.
    @Test func aReplayStoppedPartWayEndsThereUnpacedAsPaced() throws {
        let file = try walkCapture()
        func replay(paced: Bool) throws -> RecordedOutput {
            let output = RecordedOutput()
            var scan = CombinedScan(beacons: try Matey.beacons(try Matey.offers(), output: output), stores: nil)
            var asked = 0
            try scan.replay(
                file, positions: nil, pace: paced ? { _ in } : nil,
                stopped: {
                    asked += 1
                    return asked > 100
                }
            ) { _ in }
            #expect(asked == 101, "nothing is fed once stopped")
            return output
        }
        let unpaced = try replay(paced: false)
        let paced = try replay(paced: true)
        #expect(unpaced.lines == paced.lines && unpaced.times == paced.times)
        #expect(unpaced.lines.last == "finished" && unpaced.lines.count > 5)
        let whole = RecordedOutput()
        var scan = CombinedScan(beacons: try Matey.beacons(try Matey.offers(), output: whole), stores: nil)
        try scan.replay(file, positions: nil) { _ in }
        #expect(unpaced.lines.count < whole.lines.count)
        #expect(unpaced.times.last! < whole.times.last!)
    }

    /// The radio and a replay feed the same session: the walk heard live says what its replay says.
    @Test func aLiveScanSaysWhatTheReplaySays() throws {
        let file = try walkCapture()
        let replayed = RecordedOutput()
        var replay = CombinedScan(beacons: try Matey.beacons(try Matey.offers(), output: replayed), stores: nil)
        try replay.replay(file, positions: nil) { _ in }

        let live = RecordedOutput()
        let source = CaptureSource(file)
        try LiveScan(CombinedScan(beacons: try Matey.beacons(try Matey.offers(), output: live), stores: nil))
            .run(source, positions: nil)
        #expect(live.lines == replayed.lines && live.times == replayed.times)
        #expect(live.lines.count > 20)

        // A position source that fails stops the radio and is what the scan throws.
        let failing = CaptureSource(file, staysOn: true)
        #expect(throws: PositionSourceError.self) {
            try LiveScan(CombinedScan(beacons: try Matey.beacons(try Matey.offers(), output: RecordedOutput()), stores: nil))
                .run(failing, positions: .nmea(path: "/nonexistent.nmea"))
        }
        #expect(failing.cancelled)
    }

    /// A beacon lost (unheard for its tracking age) is forgotten by the session and looked up again when it comes
    /// back, so an offer another `loyalty sync` put in the cache meanwhile shows. Kept, the first look-up's "no
    /// offer here" held for the rest of the scan, and every identity ever heard near stayed in memory.
    @Test func aBeaconLostAndHeardAgainIsLookedUpAgain() throws {
        let session = try Matey.offers()
        let pizza = BeaconIdentity(uuid: Matey.uuid, major: 1, minor: 2)
        let near = [BeaconProximity(identity: pizza, proximity: .near)]
        #expect(try session.update(time: 0, beacons: near) == nil)
        #expect(try session.update(time: 6, beacons: [BeaconProximity(identity: pizza, proximity: .unknown)]) == nil)
        let offer = Offer(
            id: UUID(), retailerID: Matey.retailer.id, major: 1, minor: 2, title: "Buy one get one free",
            updatedAt: Matey.epoch)
        try OfferCache(file: session.cache.file).apply(
            CatalogPage(
                cursor: "c2", full: false, serverTime: Matey.epoch, retailers: [Matey.retailer], offers: [offer],
                removed: []),
            etag: nil, serverTimeOffset: 0)
        #expect(try session.update(time: 12, beacons: near)?.offer.offer.title == "Buy one get one free")
    }
}
