import Foundation
import LoyaltyAPI
import LoyaltyClient

/// The lines a scan on a terminal shows about the offer on screen and the store the shopper is at.
extension ClientText {
    /// Under the live table while `offer` is on screen, with the keys that answer it and how many offers
    /// wait for it to go.
    public static func offerNotice(_ offer: ResolvedOffer, waiting: Int = 0) -> String {
        "OFFER from \(TerminalText.escaped(offer.retailer.name)): \(TerminalText.escaped(offer.offer.title))"
            + "    [d] dismiss  [r] redeem" + (waiting > 0 ? "    \(moreOffers(waiting)) waiting" : "")
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

    private static func moreOffers(_ count: Int) -> String { "\(count) more offer" + (count == 1 ? "" : "s") }

    /// The shopper entered (`entered`) or left the store: its name and its retailer's.
    public static func storeEvent(entered: Bool, _ resolved: ResolvedStore) -> String {
        let verb = entered ? "entered" : "left"
        return TerminalText.escaped("\(verb) \(resolved.store.name) (\(resolved.retailer.name))")
    }
}
