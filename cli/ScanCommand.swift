#if canImport(Glibc)
    import Glibc
#endif
import BeaconRadio
import Beacons
import Foundation
import LoyaltyAPI
import LoyaltyClient

let scanCommand = CommandSpec(
    name: "scan",
    summary: "Range and monitor iBeacons, live through BlueZ or from a BTSnoop capture.",
    synopsis: "[--replay FILE] [--location SOURCE] [--json] [--region UUID[:MAJOR[:MINOR]]]...",
    discussion: """
        Ranging: about once a second (of the capture's clock when replaying) every beacon heard, nearest
        first, with its filtered RSSI, estimated distance and proximity (immediate < 0.5 m, near < 3 m,
        far, unknown when not heard for --tracking-age). Monitoring: "enter" when a beacon of a region is
        first heard, "exit" after --exit-timeout seconds without one. Without --region every proximity
        UUID heard is monitored.

        On a terminal: a live table, redrawn in place under the enter and exit lines (of beacon regions
        and, with --location, stores), which stay above it. With --json or in a pipe: JSON lines, each
        with "event" and "t" (seconds on the capture's clock): enter, exit, range, and a closing summary;
        first, while a sync has stopped midway, {"event":"warning","code":"catalog_partial",..} (on a
        terminal, a warning on standard error): offers on the catalog pages not fetched yet cannot show.
        Malformed advertising events inside a readable capture are skipped and counted in the summary; a
        damaged capture file ends the replay with an error naming the byte offset (exit code 65).

        Live scanning needs a Bluetooth adapter and CAP_NET_RAW + CAP_NET_ADMIN; `loyalty doctor` says
        what this machine lacks.

        Stores: with --location, the cached stores' geofences are monitored too: "enter" at the first
        position inside a store's radius, "exit" once the shopper has been more than --exit-margin
        metres beyond it for --exit-delay seconds. JSON lines:
        {"event":"enter","t":..,"region":{"store":..,"name":..,"retailer":..}}. When online, the catalog
        around the shopper (--radius-km) is synced at the first position and again whenever they are
        more than half that radius from where it was synced. SOURCE: gpsd[:HOST:PORT] (gpsd's JSON
        reports), nmea:FILE (a NMEA 0183 log; its timestamps are the clock) or fixed:LAT,LON.
        Live, beacons and positions run together when there is a radio; without one, or with a NMEA
        log (whose clock is not the radio's), the geofences run alone and the scan says beacons are off.
        With --replay, nmea:FILE is merged with the capture by their UTC timestamps and fixed:LAT,LON
        is one fix at the capture's first time: every line comes in "t" order, the same on every run.
        """,
    options: [
        .value("replay", "FILE", "Replay a BTSnoop capture (datalink 1001, 1002 or 2001) instead of scanning."),
        .flag("json", "JSON lines, also on a terminal."),
        .value("region", "REGION", "Monitor UUID, UUID:MAJOR or UUID:MAJOR:MINOR (repeatable).", repeatable: true),
        .value("exit-timeout", "SECONDS", "Silence before a region is exited (default 10)."),
        .value("tracking-age", "SECONDS", "Silence before a beacon's proximity is unknown (default 5)."),
        .value("snapshot-interval", "SECONDS", "Seconds between ranging snapshots (default 1)."),
        .flag("realtime", "Pace a replay by its timestamps instead of as fast as possible."),
        .value("adapter", "NAME", "The adapter to scan with (default hci0)."),
        .flag("active", "Active scanning: ask advertisers for scan responses (default passive)."),
        .flag("filter-duplicates", "Let the controller drop duplicate adverts (fewer RSSI samples)."),
    ] + offerScanOptions + locationScanOptions,
    run: runScan
)

private func runScan(_ arguments: ParsedArguments) throws {
    let location = try locationSource(arguments)
    let replay = arguments.value("replay")
    if let location, replay == nil {
        // Beacons need a radio; and a NMEA log runs on its own clock, which no live radio shares.
        if case .nmea = location {
            return try runGeofenceScan(
                arguments, location,
                radioProblem: "a NMEA log runs on its own clock; add --replay CAPTURE to merge beacons into it")
        }
        let diagnosis = RadioDiagnosis.examine(adapter: arguments.value("adapter"))
        if let problem = diagnosis.checks.first(where: { $0.status != .ok }) {
            return try runGeofenceScan(arguments, location, radioProblem: problem.detail)
        }
    }
    let path = arguments.commandPath
    let positive: (String) -> Double? = { Double($0).flatMap { $0 > 0 && $0.isFinite ? $0 : nil } }
    let regions = try arguments.allValues("region").map { text throws(UsageError) in
        do throws(BeaconIdentityConstraint.ParseError) {
            return try BeaconIdentityConstraint(parsing: text)
        } catch {
            throw UsageError(error.description, commandPath: path)
        }
    }
    let ranger = try Ranger(
        configuration: .init(
            snapshotInterval: arguments.value("snapshot-interval", default: 1, positive),
            maxTrackingAge: arguments.value("tracking-age", default: 5, positive)))
    let output: ScanSession.Output = arguments.flag("json") || !standardOutputIsTerminal ? .jsonLines : .table
    let offers = try openOfferSession(arguments, interactive: output == .table)
    var syncWarned = false
    syncOffersIfDue(offers, warned: &syncWarned)
    try warnIfCatalogPartial(offers, json: output == .jsonLines)
    let monitored = regions.isEmpty ? offers.regions : regions
    var monitor = try RegionMonitor(
        configuration: .init(
            exitTimeout: arguments.value("exit-timeout", default: 10, positive),
            monitorsEveryUUIDHeard: monitored.isEmpty))
    for region in monitored { monitor.add(BeaconRegion(region)) }

    let session = ScanSession(
        ranger: ranger, monitor: monitor, output: output, offers: offers, syncWarned: syncWarned,
        redeem: { offer in try redeemDuringScan(offer, arguments) })
    let keys = session.keys
    defer { keys?.restore() }
    var scan = CombinedScan(
        beacons: session,
        stores: try location.map { _ in
            try geofenceSession(arguments, offers: offers, json: output == .jsonLines, table: session.table)
        })
    if let replay {
        try scan.replay(replay, realtime: arguments.flag("realtime"), positions: location)
    } else {
        let scanner = try ScanSession.openScanner(
            adapter: arguments.value("adapter"),
            options: LEScanOptions(active: arguments.flag("active"), filterDuplicates: arguments.flag("filter-duplicates")))
        try LiveScan(scan).run(scanner, positions: location)
    }
}

/// Ranging and monitoring fed by sightings from a capture or the radio, printing as it goes.
struct ScanSession {
    enum Output { case jsonLines, table }

    var ranger: Ranger
    var monitor: RegionMonitor
    let output: Output
    let offers: OfferSession
    var syncWarned: Bool
    /// Redeems the offer on screen (the `r` key) and returns the line to show.
    let redeem: (ResolvedOffer) throws -> String
    /// The shopper's keys, when offers are shown on a terminal.
    private(set) var keys: TerminalKeys?
    /// The live table on a terminal; region events and redemptions are printed above it and stay.
    let table: LiveTable?
    private var lastSnapshot: RangingSnapshot?
    private var offerNotice: String?
    /// The `range` line, rewritten in place for every snapshot: at replay speed it is most of the output.
    private var rangeLine = JSONLineBuffer(capacity: 1 << 16)

    init(
        ranger: Ranger, monitor: RegionMonitor, output: Output, offers: OfferSession, syncWarned: Bool,
        redeem: @escaping (ResolvedOffer) throws -> String
    ) {
        self.ranger = ranger
        self.monitor = monitor
        self.output = output
        self.offers = offers
        self.syncWarned = syncWarned
        self.redeem = redeem
        keys = output == .table ? TerminalKeys() : nil
        table = output == .table ? LiveTable() : nil
    }

    mutating func observe(_ sighting: BeaconSighting) throws {
        for event in monitor.observe(sighting) { report(event) }
        if let snapshot = ranger.observe(sighting) { try report(snapshot) }
    }

    /// Everything due up to `time`, and the last snapshot: the end of a replay or a scan. On a
    /// terminal an offer still on screen waits for the shopper.
    mutating func finish(at time: Double) throws {
        for event in monitor.advance(to: time) { report(event) }
        try report(ranger.snapshot(at: time))
        while offers.current != nil, let keys, keys.isInteractive {
            try handle(key: keys.waitForKey())
        }
    }

    /// d dismisses the offer on screen, r redeems it, q ends the scan.
    private mutating func handle(key: UInt8?) throws {
        guard let key, let shown = offers.current else { return }
        switch key {
        case UInt8(ascii: "d"):
            offers.dismiss()
            offerNotice = nil
            redrawTable()
        case UInt8(ascii: "r"):
            let outcome = try redeem(shown.offer)
            offers.dismiss()
            offerNotice = nil
            // Above the table, so the code to show at the till stays on screen.
            redrawTable(after: outcome)
        case UInt8(ascii: "q"):
            throw SilentExit(code: ExitCode.success)
        default:
            return
        }
    }

    /// What fell due by `time`: region exits and the ranging tick.
    mutating func advance(to time: Double) throws {
        for event in monitor.advance(to: time) { report(event) }
        if let snapshot = ranger.advance(to: time) { try report(snapshot) }
    }

    static func openScanner(adapter: String?, options: LEScanOptions) throws -> LEScanner {
        do { return try LEScanner(adapter: adapter, options: options) } catch {
            let code = if case .missingCapabilities = error { ExitCode.noPermission } else { ExitCode.unavailable }
            throw CommandFailure(error.description, exitCode: code)
        }
    }

    /// The beacon frames an HCI event from the radio carries.
    static func sightings(in packet: HCIEventPacket) -> [BeaconSighting] {
        var sightings: [BeaconSighting] = []
        packet.bytes.withUnsafeBytes { bytes in
            guard var reports = try? AdvertisingReportIterator(event: bytes) else { return }
            while let report = try? reports.next() {
                try? AdvertisingData.forEachBeaconFrame(in: report.data) { frame in
                    sightings.append(BeaconSighting(frame: frame, address: report.address, rssi: report.rssi, time: packet.time))
                }
            }
        }
        return sightings
    }

    private mutating func report(_ event: RegionEvent) {
        // The JSON event's name, and the words of the terminal's line.
        let (name, verb) =
            switch event.kind {
            case .enter: ("enter", "entered")
            case .exit: ("exit", "left")
            case .state(let state): (state.rawValue, state.rawValue)
            }
        switch output {
        case .jsonLines:
            printJSONLine([
                ("event", .string(name)), ("t", roundedSeconds(event.time)), ("region", .string(event.region.description)),
            ])
        case .table:
            redrawTable(after: eventLine(at: event.time, "\(verb) beacon region \(event.region)"))
        }
    }

    private mutating func report(_ snapshot: RangingSnapshot) throws {
        if let keys { try handle(key: keys.poll()) }
        syncOffersIfDue(offers, warned: &syncWarned, table: table)
        let shown = try offers.update(snapshot)
        switch output {
        case .jsonLines:
            rangeLine.clear()
            rangeLine.rangeLine(snapshot)
            writeOut(rangeLine)
            if let shown {
                // The offer is already recorded as seen: its line must leave the process now, not sit in a
                // pipe's buffer that a kill would discard (the shopper would never be shown it).
                printJSONLine(offerEventFields(shown))
                fflush(nil)  // every output stream; stdout itself is not concurrency-safe to name
            }
        case .table:
            if let current = offers.current {
                let offer = current.offer
                offerNotice = "OFFER from \(offer.retailer.name): \(offer.offer.title)    [d] dismiss  [r] redeem"
            }
            lastSnapshot = snapshot
            redrawTable()
        }
    }

    /// The "hot and cold" view, redrawn in place once per snapshot; `line` goes above it, for good.
    private func redrawTable(after line: String? = nil) {
        table?.draw(lastSnapshot.map(tableText) ?? "", after: line)
    }

    private func tableText(_ snapshot: RangingSnapshot) -> String {
        var screen = "BEACON".padding(46) + "PROXIMITY  DISTANCE  RSSI  LAST SEEN\n"
        for beacon in snapshot.beacons {
            let distance = beacon.distance.map { String(format1: $0) + " m" } ?? "-"
            let rssi = beacon.rssi.map { String(Int($0.rounded())) } ?? "-"
            let age = String(format1: snapshot.time - beacon.lastSeen) + " s ago"
            screen += beacon.identity.description.padding(46) + beacon.proximity.rawValue.padding(11)
                + distance.padding(10) + rssi.padding(6) + age + "\n"
        }
        if snapshot.beacons.isEmpty { screen += "(no beacons in range)\n" }
        if let offerNotice { screen += "\n\(offerNotice)\n" }
        return screen
    }

    func reportSummary(_ statistics: CaptureStatistics) {
        switch output {
        case .jsonLines:
            printJSONLine([
                ("event", .string("summary")), ("records", .int(statistics.records)),
                ("advertising_reports", .int(statistics.advertisingReports)),
                ("beacon_frames", .int(statistics.beaconFrames)), ("malformed_skipped", .int(statistics.malformed)),
            ])
        case .table:
            printError(
                "replayed \(statistics.records) records: \(statistics.advertisingReports) advertising reports, "
                    + "\(statistics.beaconFrames) beacon frames, \(statistics.malformed) malformed events skipped")
        }
    }
}

extension String {
    /// One decimal place.
    init(format1 value: Double) {
        var text = JSONLineBuffer(capacity: 24)
        text.fixed(value, decimals: 1)
        self.init(decoding: text.bytes, as: UTF8.self)
    }
}

/// Redeems during a scan, as `loyalty redeem` would: the idempotency key is kept until the answer.
private func redeemDuringScan(_ offer: ResolvedOffer, _ arguments: ParsedArguments) throws -> String {
    do {
        let context = try ClientContext(arguments)
        let redeemer = Redeemer(
            cache: try context.openCache(), api: context.api, credential: try context.deviceCredential().1, now: Date.init)
        let redemption = try redeemer.redeem(offer)
        return "redeemed \"\(offer.offer.title)\": show code \(redemption.code) at the till"
    } catch let error as ClientError {
        return "could not redeem \"\(offer.offer.title)\": \(error.description)"
    }
}

/// Single keys from the terminal, without echo or Enter, restored on exit.
final class TerminalKeys {
    private var original = termios()
    let isInteractive: Bool

    init() {
        isInteractive = isatty(STDIN_FILENO) == 1 && tcgetattr(STDIN_FILENO, &original) == 0
        guard isInteractive else { return }
        var raw = original
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
    }

    /// A key pressed since the last call, if any.
    func poll() -> UInt8? {
        guard isInteractive else { return nil }
        var byte: UInt8 = 0
        return read(STDIN_FILENO, &byte, 1) == 1 ? byte : nil
    }

    /// Blocks until a key is pressed.
    func waitForKey() -> UInt8? {
        while isInteractive {
            if let key = poll() { return key }
            usleep(50_000)
        }
        return nil
    }

    func restore() {
        if isInteractive { tcsetattr(STDIN_FILENO, TCSANOW, &original) }
    }
}

/// Sleeps so a replay runs at the pace its timestamps were recorded.
struct ReplayPacing {
    private var origin: (capture: Double, wall: Double)? = nil

    mutating func wait(until captureTime: Double) {
        let now = SystemBeaconClock().now()
        guard let origin else {
            self.origin = (captureTime, now)
            return
        }
        let delay = (captureTime - origin.capture) - (now - origin.wall)
        guard delay > 0 else { return }
        // What was printed before the pause reaches a reader at the other end of a pipe now, not a buffer later.
        fflush(nil)
        usleep(useconds_t(min(delay, 60) * 1_000_000))
    }
}

/// Ctrl-C and SIGTERM end a live scan cleanly: the scanner disables scanning before the command exits.
enum ScanInterruption {
    nonisolated(unsafe) private static var scanner: LEScanner?

    static func install(_ scanner: LEScanner) {
        self.scanner = scanner
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber) { _ in ScanInterruption.scanner?.cancel() }
        }
    }
}
