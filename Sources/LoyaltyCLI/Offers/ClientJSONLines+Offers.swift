import Foundation
import LoyaltyAPI
import LoyaltyClient

/// The JSON lines of `offers`, `history` and `redeem`.
extension ClientJSONLines {
    /// `history`: an offer the account saw.
    public static func seen(_ offerID: UUID, retailer: String, title: String, at date: Date) -> String {
        object([
            ("event", .string("seen")), ("offer", id(offerID)), ("retailer", .string(retailer)),
            ("title", .string(title)), ("at", timestamp(date)),
        ])
    }

    /// `history`: a redemption of this device, done or still pending.
    public static func redemption(_ record: OfferCache.RedemptionRecord, retailer: String, title: String) -> String {
        object([
            ("event", .string(record.redemption == nil ? "redeem_pending" : "redeemed")),
            ("offer", id(record.offerID)), ("retailer", .string(retailer)), ("title", .string(title)),
            ("code", optional(record.redemption?.code)),
            ("at", timestamp(record.redemption?.redeemedAt ?? record.requestedAt)),
            ("used_at_till", timestamp(record.redemption?.acceptedAt)),
        ])
    }

    /// `redeem`.
    public static func redeemed(_ redemption: Redemption, of offer: Offer) -> String {
        object([
            ("event", .string("redeemed")), ("offer", id(offer.id)), ("title", .string(offer.title)),
            ("code", .string(redemption.code)), ("redemption_id", id(redemption.id)),
            ("redeemed_at", timestamp(redemption.redeemedAt)),
        ])
    }
}
