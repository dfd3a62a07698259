import Beacons
import Foundation
import Geofencing
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

/// The scan's lines of text: its events, offers and closing summaries.
extension ClientText {
    /// The warning when a scan's sync fails: the error and what the scan does without the server.
    public static func syncFailed(_ error: ClientError, syncing: ScanSync) -> String {
        let consequence =
            switch syncing {
            case .offers: "offers come from the cache, seen offers wait in the outbox"
            case .area: "stores come from the cache"
            }
        return "warning: \(error.description); \(consequence)"
    }

    /// A redemption during a scan (`title` and `code` escaped): the code to show at the till.
    static func redeemed(title: String, code: String) -> String {
        "redeemed \"\(title)\": show code \(code) at the till"
    }

    /// The closing line of a replay or a live scan (`live`: its records are the radio's events).
    public static func summary(_ statistics: CaptureStatistics, live: Bool) -> String {
        "\(live ? "heard" : "replayed") \(statistics.records) \(live ? "events" : "records"): "
            + "\(statistics.advertisingReports) advertising reports, "
            + "\(statistics.beaconFrames) beacon frames, \(statistics.malformed) malformed events skipped"
    }

    /// What became of the secure beacons' sightings; nil when the scan heard none.
    public static func secureSummary(_ counts: SecureBeaconResolver.Counts) -> String? {
        guard counts != SecureBeaconResolver.Counts() else { return nil }
        return "secure beacons: \(counts.resolved) sightings verified, \(counts.unresolved) not resolved, "
            + "\(counts.queued) queued for the next sync, \(counts.dropped) dropped (too old or over the queue's bound)"
    }

    /// The closing line of a NMEA log's replay.
    public static func summary(_ statistics: NMEAStream.Statistics) -> String {
        "replayed \(statistics.lines) NMEA lines: \(statistics.fixes) fixes, \(statistics.malformed) malformed lines skipped"
    }

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
