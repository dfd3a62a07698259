import Beacons
import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

/// The scan's screen for the shopper, laid out for a terminal `columns` wide: the beacons by retailer name
/// and number in their proximity's colour, and the offer on screen as a banner on its category's colour.
/// Every line fits in one row short of the width (a line that fills the last column makes some terminals
/// wrap), counted in the terminal's cells; text from the network is escaped.
struct ScanScreen {
    /// The cells a line may take.
    let width: Int
    let style: ScreenStyle
    /// The cached retailers' names by proximity UUID.
    let retailerNames: [UUID: String]

    /// `columns` 0 (unknown: a pipe) lays out for 80.
    init(columns: Int, style: ScreenStyle, retailerNames: [UUID: String]) {
        width = max(20, (columns > 0 ? columns : 80) - 1)
        self.style = style
        self.retailerNames = retailerNames
    }

    /// The live table of the beacons in range, then the offer's lines.
    func screen(_ snapshot: RangingSnapshot, offer: [String]) -> String {
        var lines = beaconLines(snapshot)
        if !offer.isEmpty { lines += [""] + offer }
        return lines.map { $0 + "\n" }.joined()
    }

    /// The header, then one row per beacon, nearest first, each in its proximity's colour.
    func beaconLines(_ snapshot: RangingSnapshot) -> [String] {
        let names = snapshot.beacons.map { beacon in
            beacon.kind.isEddystone
                ? ClientText.eddystoneName(beacon)
                : ClientText.beaconName(beacon.identity, retailer: retailerNames[beacon.identity.uuid])
        }
        let nameWidth = min(max(names.map(TerminalCells.count).max() ?? 0, 6) + 2, max(8, width - Self.tailWidth))
        let header = "BEACON".cellPadded(nameWidth) + "PROXIMITY  DISTANCE  RSSI  LAST SEEN"
        guard !snapshot.beacons.isEmpty else { return [header, "(no beacons in range)"] }
        return [header] + zip(snapshot.beacons, names).map { beacon, name in
            style.proximity(row(beacon, name: name, nameWidth: nameWidth, at: snapshot.time), beacon.proximity)
        }
    }

    /// PROXIMITY, DISTANCE and RSSI's columns and LAST SEEN's widest value (`123.4 s ago`).
    private static let tailWidth = 11 + 10 + 6 + 11

    private func row(_ beacon: RangedBeacon, name: String, nameWidth: Int, at time: Double) -> String {
        let distance = beacon.distance.map { String(format1: $0) + " m" } ?? "-"
        let rssi = beacon.rssi.map { String(Int($0.rounded())) } ?? "-"
        let age = String(format1: time - beacon.lastSeen) + " s ago"
        let numbers = " \(beacon.identity.major):\(beacon.identity.minor)"
        let shownName =
            TerminalCells.count(name) <= nameWidth - 2
            ? name : TerminalCells.fit(String(name.dropLast(numbers.count)), nameWidth - 2 - numbers.count) + numbers
        return shownName.cellPadded(nameWidth) + beacon.proximity.rawValue.cellPadded(11) + distance.cellPadded(10)
            + rssi.cellPadded(6) + age
    }

    /// A line of the event log, cut to the width.
    func eventLine(_ line: String) -> String { TerminalCells.fit(line, width) }

    /// What came of a redemption, above the table: a code on one row, the title cut when it must be so that the
    /// code stays whole beside what to do with it (the banner showed the title whole); a failure broken at
    /// spaces.
    func redemptionLine(_ outcome: ScanRedemption.Outcome) -> String {
        guard let redemption = outcome.redemption else { return wrapped(outcome.line) }
        let code = TerminalText.escaped(redemption.code)
        let room = width - TerminalCells.count(ClientText.redeemed(title: "", code: code))
        guard room > 1 else { return wrapped(outcome.line) }
        return ClientText.redeemed(title: TerminalCells.fit(outcome.title, room), code: code)
    }

    /// A message broken at spaces to the width, its continued lines indented.
    func wrapped(_ text: String) -> String {
        let lines = TerminalCells.wrapped(text, width)
        guard lines.count > 1 else { return text }
        let rest = TerminalCells.wrapped(lines.dropFirst().joined(separator: " "), width - 2)
        return ([lines[0]] + rest.map { "  " + $0 }).joined(separator: "\n")
    }

    /// The offer on screen as a banner on its category's colour: who offers it and its title, until when,
    /// its description, and the keys that answer it with how many offers wait.
    func offerBanner(_ offer: ResolvedOffer, waiting: Int = 0) -> [String] {
        let inner = min(width, 100) - 2
        let heading = "OFFER from \(TerminalText.escaped(offer.retailer.name)): \(TerminalText.escaped(offer.offer.title))"
        var lines = TerminalCells.wrapped(heading, inner, maxLines: 2)
        if let ends = offer.offer.endsAt {
            let until = "until \(Self.endDate.string(from: ends))"
            let last = lines[lines.count - 1]
            if TerminalCells.count(last) + 2 + until.count <= inner {
                lines[lines.count - 1] = last.cellPadded(inner - until.count) + until
            } else {
                lines.append(until)
            }
        }
        if let description = offer.offer.description, !description.isEmpty {
            lines += TerminalCells.wrapped(TerminalText.escaped(description), inner, maxLines: 3)
        }
        let keys = "[d] dismiss  [r] redeem"
        let more = waiting > 0 ? "\(ClientText.moreOffers(waiting)) waiting" : ""
        lines.append(keys.cellPadded(inner - more.count) + more)
        let color = BannerColor(category: offer.offer.category)
        return lines.map { line in
            style.colored
                ? style.banner(" " + line.cellPadded(inner) + " ", color)
                : " " + line.replacingOccurrences(of: " +$", with: "", options: .regularExpression)
        }
    }

    /// `31 Dec 2026, 18:00 UTC`: server time, which the offer's window is judged by.
    private static let endDate: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "d MMM yyyy, HH:mm 'UTC'"
        return formatter
    }()
}

/// Text measured in a terminal's cells (a CJK character or an emoji takes two; an SGR sequence none).
enum TerminalCells {
    static func count(_ text: some StringProtocol) -> Int {
        LiveTable.printedCells(text).reduce(0, +)
    }

    /// `text` cut to `cells`, ending in "…" when cut.
    static func fit(_ text: String, _ cells: Int) -> String {
        guard count(text) > cells else { return text }
        var kept = ""
        var used = 0
        for character in text {
            let width = count(String(character))
            if used + width > cells - 1 { break }
            kept.append(character)
            used += width
        }
        return kept + "…"
    }

    /// `text` broken at spaces into lines of at most `cells`. With `maxLines`, a word longer than that is
    /// cut and the last line ends in "…" when more did not fit; without, a longer word is kept whole (a
    /// path or a command to copy).
    static func wrapped(_ text: String, _ cells: Int, maxLines: Int? = nil) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true).map(String.init) {
            let candidate = line.isEmpty ? word : line + " " + word
            if count(candidate) <= cells {
                line = candidate
                continue
            }
            if !line.isEmpty { lines.append(line) }
            line = maxLines == nil ? word : fit(word, cells)
        }
        lines.append(line)
        guard let maxLines, lines.count > maxLines else { return lines }
        // The next line's first word did not fit after the last one kept: joined, they are cut with "…".
        return Array(lines.prefix(maxLines - 1)) + [fit(lines[maxLines - 1] + " " + lines[maxLines], cells)]
    }
}

extension String {
    /// Padded with spaces to `cells` of a terminal.
    func cellPadded(_ cells: Int) -> String {
        let used = TerminalCells.count(self)
        return used >= cells ? self : self + String(repeating: " ", count: cells - used)
    }
}
