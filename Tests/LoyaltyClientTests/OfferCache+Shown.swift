import Foundation
import LoyaltyClient
import Testing

extension OfferCache {
    /// Records `offerID` as shown at `seenAt` the way a scan does (`claimShown`): it must not have been shown.
    func show(_ offerID: UUID, at seenAt: Date) throws {
        let claimed = try claimShown(offerID, shownAt: seenAt, reportedAt: seenAt, reshowAfter: nil)
        #expect(claimed, "offer \(offerID) was already shown")
    }
}
