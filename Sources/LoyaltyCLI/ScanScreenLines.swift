import Beacons
import Foundation
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

/// The lines a scan on a terminal shows about the offer on screen and the store the shopper is at.
extension ClientText {
    /// A beacon as the shopper knows it, its retailer's name and its numbers (`Matey's 1:1`); a beacon of
    /// no cached retailer by the start of its UUID (`8F0C1DDC… 1:1`: the whole UUID is in `--json`).
    public static func beaconName(_ identity: BeaconIdentity, retailer: String?) -> String {
        "\(regionOwner(identity.uuid, retailer: retailer)) \(identity.major):\(identity.minor)"
    }

    /// An Eddystone beacon by the start of its namespace and its instance (`EDD1EBEA… 010203040506`), or
    /// `EID 1122334455667788`: no retailer owns one yet.
    static func eddystoneName(_ beacon: RangedBeacon) -> String {
        guard beacon.kind == .eddystoneUID else { return "EID \(beacon.identity.ephemeralID)" }
        let uid = beacon.identity.eddystoneUID
        return "\(uid.namespace.description.prefix(8))… \(uid.instance.hexText())"
    }

    /// A region as the shopper knows it: `Matey's`, `Matey's 1:*` (a major) or `Matey's 1:2`.
    public static func regionName(_ region: BeaconIdentityConstraint, retailer: String?) -> String {
        let owner = regionOwner(region.uuid, retailer: retailer)
        guard let major = region.major else { return owner }
        return "\(owner) \(major):" + (region.minor.map(String.init) ?? "*")
    }

    private static func regionOwner(_ uuid: UUID, retailer: String?) -> String {
        retailer.map(TerminalText.escaped) ?? String(uuid.uuidString.prefix(8)) + "…"
    }

    /// A beacon region entered or left during a scan, or its state, by its retailer's name.
    public static func regionEvent(_ event: RegionEvent, retailer: String?) -> String {
        let verb =
            switch event.kind {
            case .enter: "entered"
            case .exit: "left"
            case .state(let state): state.rawValue
            }
        return "\(verb) \(regionName(event.region, retailer: retailer))" + (retailer == nil ? " (not in the catalog)" : "")
    }

    /// A scan's event line for `offer` where there is no screen to keep it on (text in a pipe): it counts
    /// as shown, and `loyalty redeem` redeems it later.
    public static func offerShown(_ offer: ResolvedOffer) -> String {
        "offer from \(TerminalText.escaped(offer.retailer.name)): \(TerminalText.escaped(offer.offer.title))"
            + " (loyalty redeem \(offer.offer.id.uuidString.lowercased()))"
    }

    /// Under the offer on screen when the beacons ended (`ended`: "capture ended"): with `asking`, the keys
    /// that page through the offers left; without, how many will not show (they may in a later scan).
    public static func offersLeft(after ended: String, waiting: Int, asking: Bool) -> String {
        guard asking else { return "\(ended): \(moreOffers(waiting)) not shown" }
        return "\(ended): " + (waiting > 0 ? "\(moreOffers(waiting)); d next" : "d dismiss") + ", r redeem, q quit"
    }

    /// A line of the scan's event log: `2026-01-01T10:00:00Z  entered Carnaby Street (Matey's)`.
    public static func eventLine(at time: Double, _ text: String) -> String {
        "\(LoyaltyJSON.formatTimestamp(Date(timeIntervalSince1970: time)))  \(text)"
    }

    static func moreOffers(_ count: Int) -> String { "\(count) more offer" + (count == 1 ? "" : "s") }

    /// The shopper entered (`entered`) or left the store: its name and its retailer's.
    public static func storeEvent(entered: Bool, _ resolved: ResolvedStore) -> String {
        let verb = entered ? "entered" : "left"
        return TerminalText.escaped("\(verb) \(resolved.store.name) (\(resolved.retailer.name))")
    }

    /// The second closing line of a scan on a terminal: what came of its offers.
    public static func offerSummary(shown: Int, redeemed: Int, dismissed: Int, waiting: Int) -> String {
        "offers: \(shown) shown, \(redeemed) redeemed, \(dismissed) dismissed, \(waiting) left waiting"
    }

    /// What a scan on a terminal says first when it can show no offer: what to run.
    public static func noOffersHint(hasAccount: Bool, cachedOffers: Int) -> String? {
        if !hasAccount {
            return "no offers will show: this device has no account; run `loyalty account create` (or `loyalty account link CODE`), then `loyalty sync`"
        }
        guard cachedOffers == 0 else { return nil }
        return "no offers will show: none are cached; run `loyalty sync` while online"
    }
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
