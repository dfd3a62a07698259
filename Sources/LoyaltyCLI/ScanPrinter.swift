import Arguments
import Beacons
import Foundation
import Geofencing
import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

/// What a scan says, as it happens: JSON lines, or on a terminal a live table with the event log above
/// it and the offer on screen, which the shopper dismisses (d) or redeems (r; a failed redemption leaves
/// it on screen), and the offers waiting for it; q ends the scan. When the beacons end, the shopper pages
/// through the offers left. Where the cursor cannot move (TERM=dumb, a pipe with --color=always), the
/// screen is lines printed once instead of a table (`ScrollingScreen`).
final class ScanPrinter: ScanOutput {
    let json: Bool
    /// The live table, when the beacons are shown on a terminal that moves its cursor; else, without
    /// --json, the lines that stand for it.
    private var table: LiveTable?
    private var scrolling: ScrollingScreen?
    private let style: ScreenStyle
    /// The shopper's keys, when standard input is a terminal and the scan shows its screen.
    let keys: TerminalKeys?
    private let offers: OfferSession
    private let redemption: ScanRedemption?
    private let arguments: ParsedArguments
    private let interruption: Interruption?
    private var lastSnapshot: RangingSnapshot?
    /// Once the beacons ended with an offer on screen: what ended them, and whether the shopper is asked.
    private var ended: (word: String, asking: Bool)?
    /// The shopper pressed q: the scan ends as Ctrl-C ends it, with its summary.
    private var quit = false
    private var lines = ScanJSONLines()
    /// What the shopper did with the offers shown, for the closing summary.
    private var dismissed = 0
    private var redeemed = 0

    /// Without `interruption` (a scan of geofences alone), no table and no keys. `cursorMoves`: the
    /// terminal can redraw the table in place.
    init(
        _ arguments: ParsedArguments, json: Bool, offers: OfferSession, redemption: ScanRedemption?,
        interruption: Interruption?, style: ScreenStyle = .plain, cursorMoves: Bool = true
    ) {
        self.arguments = arguments
        self.json = json
        self.offers = offers
        self.redemption = redemption
        self.interruption = interruption
        self.style = style
        let screen = !json && interruption != nil
        table = screen && cursorMoves ? LiveTable() : nil
        scrolling = screen && !cursorMoves ? ScrollingScreen() : nil
        keys = screen ? interruption.flatMap(TerminalKeys.init) : nil
    }

    func snapshotDue(_ snapshot: RangingSnapshot) throws {
        if json { return printOut(bytes: lines.line(snapshot)) }
        if let keys { try handle(keys.poll()) }
    }

    func report(_ event: RegionEvent) {
        if json { return printOut(lines.line(event)) }
        let name = ClientText.regionEvent(event, retailer: offers.retailerNames[event.region.uuid])
        redrawTable(after: layout.eventLine(ClientText.eventLine(at: event.time, name)))
    }

    /// The offer's line, written at once (never left in stdio's buffer, which a kill discards); the table
    /// shows the offer when redrawn.
    func show(_ offer: OfferPresentation) -> () -> Void {
        guard json else { return {} }
        let line = Array((lines.line(offer) + "\n").utf8)
        return { printOut(bytes: line) }
    }

    func report(_ snapshot: RangingSnapshot, shown: OfferPresentation?) throws {
        if json { return }
        lastSnapshot = snapshot
        redrawTable()
    }

    /// The offer still on screen and those waiting for it: the shopper pages through them, unless standard
    /// input is not a terminal or a signal ended the scan; then the line under the offer says how many
    /// did not show.
    func beaconsFinished() throws {
        guard table != nil || scrolling != nil, offers.current != nil, let interruption else { return }
        let word =
            quit ? "quit" : interruption.isRequested ? "interrupted" : arguments.isGiven(ScanOptions.replay) ? "capture ended" : "scan ended"
        ended = (word, keys != nil && !interruption.isRequested)
        redrawTable()
        while ended?.asking == true, offers.current != nil {
            guard let input = keys?.waitForKey() else {
                ended = (interruption.isRequested && !quit ? "interrupted" : word, false)
                return redrawTable()
            }
            try handle(input)
        }
    }

    func report(_ event: GeoRegionEvent, store resolved: ResolvedStore) {
        if json { return printOut(lines.line(event, store: resolved)) }
        let line = ClientText.storeEvent(entered: event.kind == .enter, resolved)
        redrawTable(after: layout.eventLine(ClientText.eventLine(at: event.time, line)))
    }

    /// On standard error; above the live table, if there is one.
    func syncFailed(_ error: ClientError, syncing: ScanSync) {
        let warning = ClientText.syncFailed(error, syncing: syncing)
        guard let table else { return printError(warning) }
        print(table.erasure, terminator: "")
        fflush(nil)  // The erasure reaches the terminal before the warning does.
        printError(warning)
        print(table.table, terminator: "")
    }

    /// The closing lines of a replay or a live scan (`live`: its records are the radio's events): on a
    /// screen, also what came of the offers.
    func summary(_ statistics: CaptureStatistics, live: Bool = false) {
        if json { return printOut(lines.line(statistics)) }
        guard table != nil || scrolling != nil else { return printError(ClientText.summary(statistics, live: live)) }
        notice(ClientText.summary(statistics, live: live))
        notice(
            ClientText.offerSummary(
                shown: offers.shownCount, redeemed: redeemed, dismissed: dismissed, waiting: offers.waitingCount))
    }

    /// A message for the shopper on standard error, broken to the window's width.
    func notice(_ text: String) {
        printError(layout.wrapped(text))
    }

    func positionsEnded(_ end: PositionsEnd) {
        switch end {
        case .log(let statistics): summary(statistics)
        case .gpsdReceiversGone: printError("gpsd has no active GPS receiver any more; the scan ends")
        case .fixed, .gpsdClosed: break
        }
    }

    /// A reader at the other end of a pipe gets each event as it happens.
    func eventHandled() { fflush(nil) }

    func summary(_ statistics: NMEAStream.Statistics) {
        if json { return printOut(lines.line(statistics)) }
        printError(ClientText.summary(statistics))
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
        guard offers.current != nil else { return }
        switch key {
        case UInt8(ascii: "d"):
            try offers.dismiss()
            dismissed += 1
            redrawTable()
        case UInt8(ascii: "r"):
            // Above the table, so the code to show at the till (or how to redeem later) stays on screen.
            guard let outcome = try redemption?.redeemCurrent(of: offers) else { return }
            if outcome.redeemed { redeemed += 1 }
            redrawTable(after: outcome.line)
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
        let layout = ScanScreen(columns: window.columns, style: style, retailerNames: offers.retailerNames)
        if table != nil {
            let screen = lastSnapshot.map { layout.screen($0, offer: offerLines(layout)) } ?? ""
            print(table!.draw(screen, after: line, columns: window.columns, windowRows: window.rows), terminator: "")
        } else if scrolling != nil {
            print(scrolling!.update(after: line, lastSnapshot, layout, offer: offerLines(layout)), terminator: "")
        } else if let line {
            printOut(line)
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

/// The scan's screen where the cursor cannot go back up (TERM=dumb, a pipe): lines printed once, in order:
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
