import Arguments
import Beacons
import Foundation
import Geofencing
import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

/// What a scan says, as it happens: JSON lines; or on a terminal a live table with the event log above
/// it and the offer on screen, which the shopper dismisses (d) or redeems (r; a failed redemption leaves
/// it on screen), and the offers waiting for it; q ends the scan. When the beacons end, the shopper pages
/// through the offers left. Where the cursor cannot move (TERM=dumb), the screen is lines printed once
/// instead of a table (`ScrollingScreen`). In a pipe, text is the event log alone, each offer a line of it.
final class ScanPrinter: ScanOutput {
    let output: CommandOutput
    /// The live table, when the beacons are shown on a terminal that moves its cursor; on one that does
    /// not, the lines that stand for it.
    private var table: LiveTable?
    private var scrolling: ScrollingScreen?
    private let style: ScreenStyle
    /// The shopper's keys, when the scan shows its screen: the terminal's (standard input one), or a test's.
    let keys: (any ShopperKeys)?
    private let offers: OfferSession
    private let redemption: ScanRedemption?
    private let arguments: ParsedArguments
    private let interruption: Interruption?
    private var lastSnapshot: RangingSnapshot?
    /// Once the beacons ended with an offer on screen: what ended them, and whether the shopper is asked.
    private var ended: (word: String, asking: Bool)?
    /// The shopper pressed q: the scan ends as Ctrl-C ends it, with its summary.
    private var quit = false
    private let lines = ScanJSONLines()
    private var rangeLines = RangeLines()
    /// `--notify`: the desktop notifications of what shows here, and the shopper's answers to them.
    var notifier: DesktopNotifier?
    /// What the shopper did with the offers shown, for the closing summary.
    private var dismissed = 0
    private var redeemed = 0

    /// Whether offers stay until the shopper answers them: with the live table, which takes keys.
    static func isInteractive(_ output: CommandOutput) -> Bool { !output.isJSON && output.isTerminal }

    /// Without `interruption` (a scan of geofences alone), no table and no keys. `cursorMoves`: the
    /// terminal can redraw the table in place.
    init(
        _ arguments: ParsedArguments, output: CommandOutput, offers: OfferSession, redemption: ScanRedemption?,
        interruption: Interruption?, style: ScreenStyle = .plain, cursorMoves: Bool = true
    ) {
        self.arguments = arguments
        self.output = output
        self.offers = offers
        self.redemption = redemption
        self.interruption = interruption
        self.style = style
        let screen = Self.isInteractive(output) && interruption != nil
        table = screen && cursorMoves ? LiveTable() : nil
        scrolling = screen && !cursorMoves ? ScrollingScreen() : nil
        keys = screen ? output.sink.keys ?? interruption.flatMap(TerminalKeys.init) : nil
    }

    /// Whether the shopper's screen is shown (the live table, or its scrolling lines), not a log.
    private var showsScreen: Bool { table != nil || scrolling != nil }

    func snapshotDue(_ snapshot: RangingSnapshot) throws {
        try carryOutNotificationAnswers()
        // At replay speed range lines are most of the output: written in place into its buffer.
        if output.isJSON { return output.append { rangeLines.write(snapshot, to: &$0) } }
        // An offer this snapshot shows is drawn with it (`show`).
        lastSnapshot = snapshot
        sayHint()
        if let keys { try handle(keys.poll()) }
    }

    func report(_ event: RegionEvent) {
        notifier?.regionEvent(event) { (try? offers.cache.retailers()) ?? [] }
        if output.isJSON { return output.line(lines.line(event)) }
        sayHint()
        let name = ClientText.regionEvent(event, retailer: offers.retailerNames[event.region.uuid])
        redrawTable(after: layout.eventLine(ClientText.eventLine(at: event.time, name)))
    }

    /// The offer's line, written at once (never left in the output buffer, which a kill discards), or the
    /// screen redrawn with it: once this returns, the claim is settled as shown.
    func show(_ offer: OfferPresentation) -> () -> Void {
        let shown = style.banner(ClientText.offerShown(offer.offer), BannerColor(category: offer.offer.offer.category))
        let line = showsScreen ? nil : output.isJSON ? lines.line(offer) : ClientText.eventLine(at: offer.time, shown)
        let bytes = line.map { Array(($0 + "\n").utf8) }
        return { [self] in
            if let bytes { output.write(bytes: bytes) } else { redrawTable() }
            notifier?.offerShown(offer)
        }
    }

    func report(_ snapshot: RangingSnapshot, shown: OfferPresentation?) throws {
        if !showsScreen { return }
        lastSnapshot = snapshot
        redrawTable()
    }

    /// The offer still on screen and those waiting for it: the shopper pages through them, unless standard
    /// input is not a terminal or a signal ended the scan; then the line under the offer says how many
    /// did not show.
    func beaconsFinished() throws {
        guard showsScreen, offers.current != nil, let interruption else { return }
        let word =
            quit ? "quit" : interruption.isRequested ? "interrupted" : arguments.isGiven(ScanOptions.replay) ? "capture ended" : "scan ended"
        ended = (word, keys != nil && !interruption.isRequested)
        redrawTable()
        while ended?.asking == true, offers.current != nil {
            // Answers to notifications as they come, not only at the next key.
            if try carryOutNotificationAnswers() {
                redrawTable()
                continue
            }
            guard let input = keys?.waitForKey(orReadable: notifier?.descriptor ?? -1) else {
                ended = (interruption.isRequested && !quit ? "interrupted" : word, false)
                return redrawTable()
            }
            try handle(input)
        }
    }

    func report(_ event: GeoRegionEvent, store resolved: ResolvedStore) {
        notifier?.storeEvent(event, store: resolved)
        if output.isJSON { return output.line(lines.line(event, store: resolved)) }
        let line = ClientText.storeEvent(entered: event.kind == .enter, resolved)
        redrawTable(after: layout.eventLine(ClientText.eventLine(at: event.time, line)))
    }

    /// On standard error; above the live table, if there is one.
    func syncFailed(_ error: ClientError, syncing: ScanSync) {
        warn(ClientText.syncFailed(error, syncing: syncing))
    }

    /// Whether the shopper had answered notifications.
    @discardableResult private func carryOutNotificationAnswers() throws -> Bool {
        try notifier?.carryOutAnswers(show: show, said: notificationRedeemed, dismissed: { dismissed += 1 }) ?? false
    }

    /// A redemption a notification asked for: the code as `loyalty redeem --json` prints it, or a line (above
    /// the table, if there is one); a failure on standard error.
    private func notificationRedeemed(_ outcome: ScanRedemption.Outcome, of offer: ResolvedOffer) {
        if outcome.redemption != nil { redeemed += 1 }
        if showsScreen { return redrawTable(after: layout.redemptionLine(outcome)) }
        guard let redemption = outcome.redemption else { return output.error(outcome.line) }
        output.line(output.isJSON ? ClientJSONLines.redeemed(redemption, of: offer.offer) : outcome.line)
    }

    /// What to run for offers to show (`ClientText.noOffersHint`), said once the scan runs (its first
    /// event), so that a scan that fails at once says only why.
    var hint: String?
    /// The scan's secure-beacon resolution, whose counts the summary gives.
    var secure: SecureBeaconResolver?

    private func sayHint() {
        guard let hint else { return }
        self.hint = nil
        warn(layout.wrapped(hint))
    }

    /// `text` on standard error; above the live table, if there is one.
    func warn(_ text: String) {
        guard let table else { return output.error(text) }
        output.write(table.erasure)
        output.flush()  // The erasure reaches the terminal before the warning does.
        output.error(text)
        output.write(table.table)
    }

    /// The closing lines of a replay or a live scan (`live`: its records are the radio's events) and what
    /// came of the offers; on a screen, broken to its width.
    func summary(_ statistics: CaptureStatistics, live: Bool = false) {
        if output.isJSON { return output.line(lines.line(statistics, secure: secure?.counts)) }
        let offerSummary = ClientText.offerSummary(
            shown: offers.shownCount, redeemed: redeemed, dismissed: dismissed, waiting: offers.waitingCount)
        let secureSummary = secure.flatMap { ClientText.secureSummary($0.counts) }
        for line in [ClientText.summary(statistics, live: live), offerSummary] + (secureSummary.map { [$0] } ?? []) {
            if showsScreen { notice(line) } else { output.error(line) }
        }
    }

    /// A message for the shopper on standard error, broken to the window's width.
    private func notice(_ text: String) {
        output.error(layout.wrapped(text))
    }

    func positionsEnded(_ end: PositionsEnd) {
        switch end {
        case .log(let statistics): summary(statistics)
        case .gpsdReceiversGone: output.error("gpsd has no active GPS receiver any more; the scan ends")
        case .fixed, .gpsdClosed: break
        }
    }

    /// A reader at the other end of a pipe gets each event as it happens.
    func eventHandled() { output.flush() }

    func summary(_ statistics: NMEAStream.Statistics) {
        if output.isJSON { return output.line(lines.line(statistics)) }
        output.error(ClientText.summary(statistics))
    }

    /// d dismisses the offer on screen, r redeems it (either shows the next waiting), q ends the scan as a
    /// first Ctrl-C does: the summary still comes, and a damaged capture's error. Back from a stop, the
    /// table is drawn again under what the shell wrote.
    private func handle(_ input: TerminalInput?) throws {
        guard case .key(let key) = input else {
            guard input == .resumed else { return }
            table?.startAfresh()
            return redrawTable()
        }
        if key == UInt8(ascii: "q") {
            quit = true
            interruption?.request()
            if let ended { self.ended = (ended.word, false) }
            return redrawTable()
        }
        guard let answered = offers.current else { return }
        // Off the screen, it needs no answer on the desktop either.
        defer {
            if offers.current?.offer.offer.id != answered.offer.offer.id { notifier?.answeredElsewhere(answered.offer) }
        }
        switch key {
        case UInt8(ascii: "d"):
            try offers.dismiss(show: show)
            dismissed += 1
            redrawTable()
        case UInt8(ascii: "r"):
            // Above the table, so the code to show at the till (or how to redeem later) stays on screen.
            guard let outcome = try redemption?.redeemCurrent(of: offers, show: show) else { return }
            if outcome.redemption != nil { redeemed += 1 }
            redrawTable(after: layout.redemptionLine(outcome))
        default:
            return
        }
    }

    /// The screen laid out for the window as it is now.
    private var layout: ScanScreen {
        ScanScreen(columns: LiveTable.windowSize.columns, style: style, retailerNames: offers.retailerNames)
    }

    /// The "hot and cold" view, redrawn in place once per snapshot; `line` goes above it, for good (without
    /// a table, it is simply printed, and on a scrolling screen so are the rows that changed).
    private func redrawTable(after line: String? = nil) {
        let window = LiveTable.windowSize
        if table != nil {
            let screen = lastSnapshot.map { layout.screen($0, offer: offerLines(layout)) } ?? ""
            output.write(table!.draw(screen, after: line, columns: window.columns, windowRows: window.rows))
        } else if scrolling != nil {
            output.write(scrolling!.update(after: line, lastSnapshot, layout, offer: offerLines(layout)))
        } else if let line {
            output.line(line)
        }
    }

    /// The offer on screen as a banner with how many wait; once the beacons ended, what the shopper can do
    /// instead.
    private func offerLines(_ layout: ScanScreen) -> [String] {
        guard let current = offers.current else { return [] }
        // Lines printed once would repeat the banner each time the count changed.
        let waiting = table == nil ? 0 : offers.waitingCount
        guard let ended else { return layout.offerBanner(current.offer, waiting: waiting) }
        let banner = layout.offerBanner(current.offer)
        guard ended.asking || offers.waitingCount > 0 else { return banner }
        return banner + [ClientText.offersLeft(after: ended.word, waiting: offers.waitingCount, asking: ended.asking)]
    }
}

/// The scan's screen where the cursor cannot go back up (TERM=dumb): lines printed once, in order:
/// the event lines, a beacon's row when its proximity changes, and the offer's banner when another shows
/// (then only the lines added under it, such as what is left when the beacons end).
struct ScrollingScreen {
    private var proximities: [BeaconIdentity: Proximity] = [:]
    private var headerShown = false
    private var offer: [String] = []

    mutating func update(after line: String?, _ snapshot: RangingSnapshot?, _ layout: ScanScreen, offer: [String])
        -> String
    {
        var text = line.map { $0 + "\n" } ?? ""
        if let snapshot, !snapshot.beacons.isEmpty {
            let lines = layout.beaconLines(snapshot)
            for (beacon, row) in zip(snapshot.beacons, lines.dropFirst())
            where proximities.updateValue(beacon.proximity, forKey: beacon.identity) != beacon.proximity {
                if !headerShown { text += lines[0] + "\n" }
                headerShown = true
                text += row + "\n"
            }
        }
        let added = offer.starts(with: self.offer) ? offer.dropFirst(self.offer.count) : offer[...]
        text += added.map { $0 + "\n" }.joined()
        self.offer = offer
        return text
    }
}
