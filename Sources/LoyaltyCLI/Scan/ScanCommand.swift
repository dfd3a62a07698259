import Arguments
import BeaconRadio
import Beacons
import Foundation
import LoyaltyClient

enum ScanOptions {
    static let replay = Option<String>(
        "replay", value: "FILE", help: "Replay a BTSnoop capture (datalink 1001, 1002 or 2001) instead of scanning.")
    static let region = Option<BeaconIdentityConstraint>(
        "region", value: "REGION", help: "Monitor UUID, UUID:MAJOR or UUID:MAJOR:MINOR (repeatable).", repeatable: true,
        parse: BeaconIdentityConstraint.init(parsing:))
    static let exitTimeout = Option<Double>.seconds("exit-timeout", help: "Silence before a region is exited (default 10).")
    static let trackingAge = Option<Double>.seconds(
        "tracking-age", help: "Silence before a beacon's proximity is unknown (default 5).")
    static let snapshotInterval = Option<Double>.seconds(
        "snapshot-interval", help: "Seconds between ranging snapshots (default 1).")
    static let realtime = Flag("realtime", help: "Pace a replay by its timestamps instead of as fast as possible.")
    static let active = Flag("active", help: "Active scanning: ask advertisers for scan responses (default passive).")
    static let filterDuplicates = Flag(
        "filter-duplicates", help: "Let the controller drop duplicate adverts (fewer RSSI samples).")
    static let power = Option<ScanPower>(
        "power", value: "PROFILE",
        help: "Radio duty cycle: high (listen all the time), balanced (25 %, passive) or low (10 %, passive); "
            + "default: the config's scan_power, else LOYALTY_SCAN_POWER_DEFAULT (the user unit's low), else high.",
        expected: "high, balanced or low"
    ) { ScanPower(rawValue: $0) }
    static let color = Option<ColorChoice>(
        "color", value: "WHEN",
        help: "Colour the screen: auto (default: a terminal whose TERM is not dumb, without NO_COLOR), always, never.",
        expected: "auto, always or never"
    ) { ColorChoice(rawValue: $0) }

    static let all: [any DeclaredOption] = [
        replay, ClientOptions.json, region, exitTimeout, trackingAge, snapshotInterval, realtime, active, filterDuplicates,
        power, color,
    ] + ControllerOptions.all
}

let scanCommand = Command(
    name: "scan",
    summary: "Range and monitor iBeacons, live through BlueZ or from a BTSnoop capture.",
    discussion: """
        Ranging: about once a second (of the capture's clock when replaying) every beacon heard, nearest
        first, with its filtered RSSI, estimated distance and proximity (immediate < 0.5 m, near < 3 m,
        far, unknown when not heard for --tracking-age). Monitoring: "enter" when a beacon of a region is
        first heard, "exit" after --exit-timeout seconds without one. Without --region the retailers of
        the cached catalog are (as syncs during the scan change them), or without any every UUID heard.

        On a terminal: a live table, redrawn in place under the enter and exit lines (of beacon regions
        and, with --location, stores), which stay above it. Beacons go by their retailer's name and
        numbers (Matey's 1:1; one of no cached retailer by the start of its UUID), in the hot/cold
        colours: immediate red, near orange, far blue, unknown dim. The offer on screen is a banner on
        its category's colour (food blue, clothing red, any other grey) with its description and end
        date. Everything is cut to fit the window. With TERM=dumb the screen is plain lines with no
        cursor movement: the events, a beacon's row when its proximity changes, and each offer once. In
        a pipe, the text is the event log alone, each offer a line of it. --color=auto colours a terminal
        whose TERM is set and not dumb unless NO_COLOR is set (not empty); always colours also a pipe (its
        offer lines on their category's colour) and wins over NO_COLOR; never does not colour. The closing
        summary says how many offers were shown, redeemed, dismissed and left waiting; a scan that can
        show no offer (no account, nothing cached) says what to run as it starts. With --json: JSON
        lines, each with "event" and "t" (seconds on the capture's clock): enter, exit, range, and a closing summary;
        first, while a sync has stopped midway, {"event":"warning","code":"catalog_partial",..} (on a
        terminal, a warning on standard error): offers on the catalog pages not fetched yet cannot show.
        Malformed advertising events inside a readable capture are skipped and counted in the summary; a
        damaged capture file ends the replay with an error naming the byte offset (exit code 65).

        Offers on a terminal: one at a time, until d (dismiss) or r (redeem); offers whose beacons came
        near meanwhile wait their turn and show next (each is recorded as seen only when it shows). A
        redemption that does not go through leaves the offer on screen and names the `loyalty redeem`
        that redeems it later; one the server refuses for good says why and shows the next. When
        a replay ends with an offer on screen the scan says how many are left and waits for d, r or q;
        with standard input not a terminal it ends, saying how many did not show. q ends the scan as
        Ctrl-C does, with its summary (and a damaged capture's error). Ctrl-Z gives the shell its terminal
        back; fg takes single keys again and draws the table anew.

        Power: --power high listens all the time (today's scan, for a shopper looking at the screen);
        balanced listens passively 182.5 ms every 730 ms (25 %, Android's BALANCED) and low 140 ms every
        1,400 ms (10 %, Android's LOW_POWER). A beacon advertising every 100 ms is entered within about
        0.7 s (balanced) or 1.4 s (low). A slower scan hears a beacon less often, so its exit timeout and
        tracking age are at least what a beacon advertising once a second needs to be heard in: balanced
        25.6 s and 8.8 s, low 64.4 s and 22.4 s (a longer --exit-timeout or --tracking-age is kept).
        Through bluetoothd's discovery the scan is bluetoothd's (active); `loyalty doctor` says which.

        Suspend: live time leaves out the time the machine sleeps, so a region whose exit fell due before
        the sleep exits at the resume and the others keep the silence they had; what waited unread from
        before the sleep is dropped, the scan is programmed again, and beacons from before the sleep show
        unknown until heard again.

        Live scanning needs a Bluetooth adapter and CAP_NET_RAW + CAP_NET_ADMIN; `loyalty doctor` says
        what this machine lacks. Live time is the monotonic clock and runs while nothing is heard. Ctrl-C,
        Ctrl-\\ (SIGQUIT), SIGTERM or SIGHUP end a beacon scan or a replay with the summary, the terminal
        and the controller as found (a second Ctrl-C ends at once). While bluetoothd is discovering, the
        scan joins its discovery through D-Bus instead of reprogramming the controller.

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

        Notifications: with --notify each offer, as it shows, is also posted as a desktop notification
        (org.freedesktop.Notifications on the session bus): the retailer and title, the description, and
        where the notification server shows actions, Redeem and Dismiss. Redeem redeems as r does and
        replaces the notification with the code for the till and its QR code (a PNG beside the cache);
        Dismiss, or closing it, dismisses the offer. --notify-on offers,enter,exit chooses what posts:
        offers, entering and leaving a retailer's region or a store (once per entry). With no session
        bus or no notification server the scan goes on and says once that notifications are off. The
        answers are read at each ranging snapshot, so they take up to --snapshot-interval to act.
        """,
    options: ScanOptions.all + OfferScanOptions.all + NotifyOptions.all + LocationOptions.all,
    exclusiveOptions: ControllerOptions.exclusive,
    run: runScan
)

private func runScan(_ arguments: ParsedArguments) throws {
    let location = try locationSource(arguments)
    let replay = arguments.value(ScanOptions.replay)
    let transport = ControllerOptions.transport(arguments)
    if let location, replay == nil {
        // Beacons need a radio; and a NMEA log runs on its own clock, which no live radio shares.
        if case .nmea = location {
            return try runGeofenceScan(
                arguments, location,
                radioProblem: "a NMEA log runs on its own clock; add --replay CAPTURE to merge beacons into it")
        }
        let diagnosis = RadioDiagnosis.examine(transport: transport)
        if let problem = diagnosis.checks.first(where: { $0.status != .ok }) {
            return try runGeofenceScan(arguments, location, radioProblem: problem.detail)
        }
    }
    let regions = arguments.values(ScanOptions.region)
    // A replay keeps the capture's samples as they are: the power profile is the live radio's.
    let power = replay == nil ? try scanPower(arguments) : .high
    let snapshotInterval = arguments.value(ScanOptions.snapshotInterval) ?? 1
    let ranging = Ranger.Configuration(
        snapshotInterval: snapshotInterval,
        maxTrackingAge: max(arguments.value(ScanOptions.trackingAge) ?? 5, power.minimumTrackingAge),
        proximityMargins: .standard(for: power))
    let output = CommandScope.output(json: arguments.flag(ClientOptions.json))
    // From before the terminal's keys are taken: a signal ends the scan through its usual end, the summary.
    let interruption = CommandScope.interruption
    let (offers, redemption, home, hasAccount, secure) = try openOfferSession(
        arguments, interactive: ScanPrinter.isInteractive(output), interruption: interruption,
        replaying: replay != nil)
    let environment = CommandScope.environment
    let printer = ScanPrinter(
        arguments, output: output, offers: offers, redemption: redemption, interruption: interruption,
        style: ScreenStyle(
            arguments.value(ScanOptions.color) ?? .auto, standardOutputIsTerminal: output.isTerminal, environment: environment),
        cursorMoves: environment["TERM"] != "dumb")
    defer { printer.keys?.restore() }
    printer.secure = secure
    if arguments.flag(NotifyOptions.notify) {
        let answering = NotificationAnswering(
            offers: offers, redemption: redemption, codeImages: home.dataDirectory.appendingPathComponent("codes"))
        printer.notifier = DesktopNotifier(
            events: arguments.value(NotifyOptions.notifyOn) ?? .offers, answering: answering
        ) { [unowned printer] in printer.warn($0) }
    }
    var syncWarned = false
    offers.syncIfDue(warned: &syncWarned, output: printer)
    try warnIfCatalogPartial(offers.cache, output)
    if !output.isJSON {
        printer.hint = ClientText.noOffersHint(hasAccount: hasAccount, cachedOffers: try offers.cache.offerCount)
    }
    let exitTimeout = max(arguments.value(ScanOptions.exitTimeout) ?? 10, power.minimumExitTimeout)
    var scan = CombinedScan(
        beacons: try BeaconScanSession(
            offers: offers, regions: regions, ranging: ranging, exitTimeout: exitTimeout, output: printer,
            syncWarned: syncWarned, secure: secure),
        stores: try location.map { _ in try geofenceSession(arguments, offers: offers, output: printer) })
    if let replay {
        var pacing = ReplayPacing()
        try scan.replay(
            replay, positions: location,
            pace: arguments.flag(ScanOptions.realtime) ? { time in
                guard let delay = pacing.delay(before: time, now: SystemBeaconClock().now()) else { return }
                // What was printed before the pause reaches a reader at the other end of a pipe now.
                output.flush()
                interruption.sleep(delay)
            } : nil,
            stopped: { interruption.isRequested },
            summary: { statistics in
                printer.summary(statistics.capture)
                if let log = statistics.log { printer.summary(log) }
            })
    } else {
        let options = power.options(
            active: arguments.flag(ScanOptions.active), filterDuplicates: arguments.flag(ScanOptions.filterDuplicates))
        let radio = RadioSightings(
            // Beside bluetoothd, a monitor's patterns: the UUIDs of `--region` (iBeacon regions), else every iBeacon (the
            // ranging shows every UUID heard, and a working set fetches an unknown one's retailer).
            try openScanner(
                transport: transport, options: options, power: power,
                uuids: regions.filter { !$0.isEddystone }.map(\.uuid)), snapshotInterval: snapshotInterval)
        interruption.cancels(radio.cancel)
        try LiveScan(scan).run(radio, positions: location)
        printer.summary(radio.statistics, live: true)
    }
}

/// `--power`, else the config's `scan_power`, else `LOYALTY_SCAN_POWER_DEFAULT` (the user unit sets low), else high.
func scanPower(_ arguments: ParsedArguments) throws -> ScanPower {
    if let power = arguments.value(ScanOptions.power) { return power }
    let environment = CommandScope.environment
    if let configured = try ClientHome(environment: environment).loadConfig().scanPower { return configured }
    guard let text = environment["LOYALTY_SCAN_POWER_DEFAULT"], !text.isEmpty else { return .high }
    guard let power = ScanPower(rawValue: text) else {
        throw arguments.usageError("LOYALTY_SCAN_POWER_DEFAULT is '\(text)': use high, balanced or low")
    }
    return power
}
