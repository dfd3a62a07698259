import Arguments
import Beacons
import Foundation
import Geofencing
import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

/// What a scan says, as it happens: JSON lines, or on a terminal a live table with the event log above
/// it and the offer on screen, which the shopper dismisses (d) or redeems (r); q ends the scan.
final class ScanPrinter: ScanOutput {
    let json: Bool
    /// The live table and the shopper's keys, when the beacons are shown on a terminal.
    let table: LiveTable?
    let keys: TerminalKeys?
    private let offers: OfferSession
    /// The scan's arguments, for redeeming as `loyalty redeem` would.
    private let arguments: ParsedArguments
    private var lastSnapshot: RangingSnapshot?
    private var offerNotice: String?
    private var lines = ScanJSONLines()

    init(_ arguments: ParsedArguments, json: Bool, interactive: Bool, offers: OfferSession) {
        self.arguments = arguments
        self.json = json
        self.offers = offers
        table = interactive ? LiveTable() : nil
        keys = interactive ? TerminalKeys() : nil
    }

    func snapshotDue() throws {
        if let keys { try handle(key: keys.poll()) }
    }

    func report(_ event: RegionEvent) {
        if json { return printOut(lines.line(event)) }
        redrawTable(after: eventLine(at: event.time, ClientText.regionEvent(event)))
    }

    func report(_ snapshot: RangingSnapshot, shown: OfferPresentation?) throws {
        if json {
            printOut(bytes: lines.line(snapshot))
            if let shown {
                // The offer is already recorded as seen: its line must leave the process now, not sit in a
                // pipe's buffer that a kill would discard (the shopper would never be shown it).
                printOut(lines.line(shown))
                fflush(nil)  // every output stream; stdout itself is not concurrency-safe to name
            }
            return
        }
        if let current = offers.current { offerNotice = ClientText.offerNotice(current.offer) }
        lastSnapshot = snapshot
        redrawTable()
    }

    /// An offer still on screen waits for the shopper.
    func beaconsFinished() throws {
        while offers.current != nil, let keys, keys.isInteractive {
            try handle(key: keys.waitForKey())
        }
    }

    func report(_ event: GeoRegionEvent, store resolved: ResolvedStore) {
        if json { return printOut(lines.line(event, store: resolved)) }
        let line = eventLine(at: event.time, ClientText.storeEvent(entered: event.kind == .enter, resolved))
        if let table { table.printAbove(line) } else { printOut(line) }
    }

    func syncFailed(_ error: ClientError, syncing: ScanSync) {
        printWarning(ClientText.syncFailed(error, syncing: syncing), above: table)
    }

    /// The closing line of a replay or a live scan (`live`: its records are the radio's events).
    func summary(_ statistics: CaptureStatistics, live: Bool = false) {
        if json { return printOut(lines.line(statistics)) }
        printError(ClientText.summary(statistics, live: live))
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

    /// d dismisses the offer on screen, r redeems it, q ends the scan.
    private func handle(key: UInt8?) throws {
        guard let key, let shown = offers.current else { return }
        switch key {
        case UInt8(ascii: "d"):
            offers.dismiss()
            offerNotice = nil
            redrawTable()
        case UInt8(ascii: "r"):
            let outcome = try redeemDuringScan(shown.offer)
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

    /// Redeems as `loyalty redeem` would (the idempotency key is kept until the answer); the line to show.
    private func redeemDuringScan(_ offer: ResolvedOffer) throws -> String {
        do {
            let context = try ClientContext(arguments)
            let redeemer = Redeemer(
                cache: try context.openCache(), api: context.api, credential: try context.deviceCredential().1,
                now: Date.init)
            let redemption = try redeemer.redeem(offer)
            return "redeemed \"\(TerminalText.escaped(offer.offer.title))\": show code \(redemption.code) at the till"
        } catch let error as ClientError {
            return "could not redeem \"\(TerminalText.escaped(offer.offer.title))\": \(TerminalText.escaped(error.description))"
        }
    }

    /// The "hot and cold" view, redrawn in place once per snapshot; `line` goes above it, for good.
    private func redrawTable(after line: String? = nil) {
        table?.draw(lastSnapshot.map { ClientText.ranging($0, offerNotice: offerNotice) } ?? "", after: line)
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
