import Foundation
import LoyaltyAPI
import LoyaltyClient

/// What `offers`, `history` and `redeem` print. Text the server sent is escaped for the terminal.
extension ClientText {
    /// `redeem`'s lines beside the code's QR symbol: the offer and its retailer, and the code to show.
    public static func redeemed(_ redemption: Redemption, of offer: ResolvedOffer) -> [String] {
        [
            "redeemed \"\(TerminalText.escaped(offer.offer.title))\" at \(TerminalText.escaped(offer.retailer.name))",
            "show code \(TerminalText.escaped(redemption.code)) at the till",
        ]
    }

    /// `history`'s lines beside the newest code no till has accepted yet.
    public static func openCode(_ code: String, title: String) -> [String] {
        ["show code \(TerminalText.escaped(code)) at the till", "for \"\(TerminalText.escaped(title))\""]
    }

    /// `offers`: the cached offers, whether this account has seen each, and their window judged at `now`
    /// (server time, as the scan judges windows).
    public static func cachedOffers(_ offers: [ResolvedOffer], seen: [UUID: Date], now: Date) -> String {
        table(
            ["RETAILER", "BEACON", "TITLE", "UNTIL", "SEEN", "ID"],
            offers.map { resolved in
                let offer = resolved.offer
                let until =
                    if let starts = offer.startsAt, now < starts { "starts \(timestamp(starts))" }
                    else if let ends = offer.endsAt, ends <= now { "ended \(timestamp(ends))" }
                    else { timestamp(offer.endsAt) }
                return [
                    resolved.retailer.name, "\(resolved.offer.major):\(resolved.offer.minor)", resolved.offer.title,
                    until, seen[resolved.offer.id] == nil ? "no" : "yes",
                    resolved.offer.id.uuidString.lowercased(),
                ]
            })
    }
}
