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
/// through the offers left. In a pipe, text is the event log alone, each offer a line of it.
final class ScanPrinter: ScanOutput {
    let output: CommandOutput
    /// The live table, when the beacons are shown on a terminal, and the shopper's keys there.
    private var table: LiveTable?
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
    private var lines = ScanJSONLines()
    /// `--notify`: the desktop notifications of what shows here, and the shopper's answers to them.
    var notifier: DesktopNotifier?

    /// Whether offers stay until the shopper answers them: with the live table, which takes keys.
    static func isInteractive(_ output: CommandOutput) -> Bool { !output.isJSON && output.isTerminal }

    /// Without `interruption` (a scan of geofences alone), no table and no keys.
    init(
        _ arguments: ParsedArguments, output: CommandOutput, offers: OfferSession, redemption: ScanRedemption?,
        interruption: Interruption?
    ) {
        self.arguments = arguments
        self.output = output
        self.offers = offers
        self.redemption = redemption
        self.interruption = interruption
        table = Self.isInteractive(output) && interruption != nil ? LiveTable() : nil
        keys = table == nil ? nil : output.sink.keys ?? interruption.flatMap(TerminalKeys.init)
    }

    func snapshotDue(_ snapshot: RangingSnapshot) throws {
        try notifier?.carryOutAnswers(show: show, said: notificationRedeemed)
        if output.isJSON { return output.write(bytes: lines.line(snapshot)) }
        if let keys { try handle(keys.poll()) }
    }

    func report(_ event: RegionEvent) {
        notifier?.regionEvent(event) { (try? offers.cache.retailers()) ?? [] }
        if output.isJSON { return output.line(lines.line(event)) }
        redrawTable(after: ClientText.eventLine(at: event.time, ClientText.regionEvent(event)))
    }

    /// The offer's line, written at once (never left in stdio's buffer, which a kill discards); the table
    /// shows the offer when redrawn.
    func show(_ offer: OfferPresentation) -> () -> Void {
        let line =
            table != nil
            ? nil : output.isJSON ? lines.line(offer) : ClientText.eventLine(at: offer.time, ClientText.offerShown(offer.offer))
        let bytes = line.map { Array(($0 + "\n").utf8) }
        return { [output, notifier] in
            if let bytes { output.write(bytes: bytes) }
            notifier?.offerShown(offer)
        }
    }

    func report(_ snapshot: RangingSnapshot, shown: OfferPresentation?) throws {
        if table == nil { return }
        lastSnapshot = snapshot
        redrawTable()
    }

    /// The offer still on screen and those waiting for it: the shopper pages through them, unless standard
    /// input is not a terminal or a signal ended the scan; then the line under the offer says how many
    /// did not show.
    func beaconsFinished() throws {
        guard table != nil, offers.current != nil, let interruption else { return }
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
        notifier?.storeEvent(event, store: resolved)
        if output.isJSON { return output.line(lines.line(event, store: resolved)) }
        let line = ClientText.storeEvent(entered: event.kind == .enter, resolved)
        redrawTable(after: ClientText.eventLine(at: event.time, line))
    }

    /// On standard error; above the live table, if there is one.
    func syncFailed(_ error: ClientError, syncing: ScanSync) {
        warn(ClientText.syncFailed(error, syncing: syncing))
    }

    /// A redemption a notification asked for: the code as `loyalty redeem --json` prints it, or a line (above
    /// the table, if there is one); a failure on standard error.
    private func notificationRedeemed(_ outcome: ScanRedemption.Outcome, of offer: ResolvedOffer) {
        if table != nil { return redrawTable(after: outcome.line) }
        guard let redemption = outcome.redemption else { return output.error(outcome.line) }
        output.line(output.isJSON ? ClientJSONLines.redeemed(redemption, of: offer.offer) : outcome.line)
    }

    /// On standard error; above the live table, if there is one.
    func warn(_ warning: String) {
        guard let table else { return output.error(warning) }
        output.write(table.erasure)
        output.flush()  // The erasure reaches the terminal before the warning does.
        output.error(warning)
        output.write(table.table)
    }

    /// The closing line of a replay or a live scan (`live`: its records are the radio's events).
    func summary(_ statistics: CaptureStatistics, live: Bool = false) {
        if output.isJSON { return output.line(lines.line(statistics)) }
        output.error(ClientText.summary(statistics, live: live))
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
        guard offers.current != nil else { return }
        switch key {
        case UInt8(ascii: "d"):
            try offers.dismiss(show: show)
            redrawTable()
        case UInt8(ascii: "r"):
            // Above the table, so the code to show at the till (or how to redeem later) stays on screen.
            if let outcome = try redemption?.redeemCurrent(of: offers, show: show) { redrawTable(after: outcome) }
        default:
            return
        }
    }

    /// The "hot and cold" view, redrawn in place once per snapshot; `line` goes above it, for good (without
    /// a table, it is simply printed).
    private func redrawTable(after line: String? = nil) {
        let screen = lastSnapshot.map { ClientText.ranging($0, offerNotice: offerNotice) } ?? ""
        let window = LiveTable.windowSize
        if let text = table?.draw(screen, after: line, columns: window.columns, windowRows: window.rows) {
            output.write(text)
        } else if let line {
            output.line(line)
        }
    }

    /// The offer on screen and how many wait; once the beacons ended, what the shopper can do instead.
    private var offerNotice: String? {
        guard let current = offers.current else { return nil }
        guard let ended else { return ClientText.offerNotice(current.offer, waiting: offers.waitingCount) }
        let notice = ClientText.offerNotice(current.offer)
        guard ended.asking || offers.waitingCount > 0 else { return notice }
        let left = ClientText.offersLeft(after: ended.word, waiting: offers.waitingCount, asking: ended.asking)
        return notice + "\n" + left
    }
}
