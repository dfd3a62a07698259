import Foundation
import LoyaltyAPI
import LoyaltyClient

/// What `loyalty history` shows, read from the cache: the offers seen and the redemptions, as JSON lines
/// and as table rows, and the newest code a till has not accepted yet.
public struct ShopperHistory {
    /// Seen offers, oldest first, then redemptions, oldest first.
    public private(set) var jsonLines: [String] = []
    /// WHEN, WHAT, RETAILER, OFFER, CODE; in time order.
    public let rows: [[String]]
    /// The newest redemption code not yet used at a till, and its offer's title.
    public private(set) var open: (code: String, title: String)?

    public init(_ cache: OfferCache) throws(ClientError) {
        let title = { (id: UUID) throws(ClientError) -> (String, String) in
            let offer = try cache.offer(id: id)
            return (offer?.offer.title ?? "(no longer in the catalog)", offer?.retailer.name ?? "-")
        }
        var rows: [[String]] = []
        for (id, seenAt) in try cache.seen().sorted(by: { $0.value < $1.value }) {
            let (name, retailer) = try title(id)
            jsonLines.append(ClientJSONLines.seen(id, retailer: retailer, title: name, at: seenAt))
            rows.append([timestamp(seenAt), "seen", retailer, name, ""])
        }
        for record in try cache.redemptions().reversed() {
            let (name, retailer) = try title(record.offerID)
            jsonLines.append(ClientJSONLines.redemption(record, retailer: retailer, title: name))
            rows.append([
                timestamp(record.redemption?.redeemedAt ?? record.requestedAt),
                record.redemption == nil ? "redeem pending" : "redeemed", retailer, name,
                record.redemption?.code ?? "retry `loyalty redeem \(record.offerID.uuidString.lowercased())`",
            ])
            if let redemption = record.redemption {
                if let acceptedAt = redemption.acceptedAt {
                    rows.append([timestamp(acceptedAt), "used at the till", retailer, name, redemption.code])
                } else {
                    open = (redemption.code, name)
                }
            }
        }
        self.rows = rows.sorted { $0[0] < $1[0] }
    }

    /// The table `loyalty history` prints on a terminal.
    public var table: String { ClientText.table(["WHEN", "WHAT", "RETAILER", "OFFER", "CODE"], rows) }
}
