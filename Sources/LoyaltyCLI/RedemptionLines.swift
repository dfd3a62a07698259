import LoyaltyAPI
import LoyaltyClient

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
}
