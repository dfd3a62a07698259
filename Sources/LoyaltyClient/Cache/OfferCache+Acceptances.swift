import Foundation
import LoyaltyAPI

/// Codes a till accepted: the account's redemptions as the server lists them, noted against the ones this
/// device made, so `history` says which were used at the till.
extension OfferCache {
    /// Whether this device holds a redemption no till has accepted yet: only then is there anything to ask.
    public var hasUnacceptedRedemptions: Bool {
        get throws(ClientError) {
            try read { db in
                try !db.query(
                    "SELECT 1 FROM redemptions WHERE redemption_id IS NOT NULL AND accepted_at IS NULL LIMIT 1"
                ).isEmpty
            }
        }
    }

    /// Notes when each of `list`'s accepted redemptions was accepted; returns how many were new to this device.
    public func noteAcceptances(_ list: RedemptionList) throws(ClientError) -> Int {
        try write { db in
            var noted = 0
            for redemption in list.redemptions {
                guard let acceptedAt = redemption.acceptedAt else { continue }
                noted += try db.run(
                    "UPDATE redemptions SET accepted_at = ? WHERE redemption_id = ? AND accepted_at IS NULL",
                    [.real(acceptedAt.timeIntervalSince1970), .text(redemption.id.uuidString)])
            }
            return noted
        }
    }
}

extension SyncEngine {
    /// Asks which of the account's codes tills accepted, when this device has any still open.
    func pullAcceptances() throws(ClientError) -> Int {
        guard try cache.hasUnacceptedRedemptions else { return 0 }
        return try cache.noteAcceptances(try api.redemptions(credential))
    }
}
