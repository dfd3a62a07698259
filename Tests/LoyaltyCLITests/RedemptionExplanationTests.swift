import Foundation
import LoyaltyAPI
import LoyaltyClient
import Testing

@testable import LoyaltyCLI

/// What `redeem` and the scan's `r` say when a redemption fails.
@Suite struct RedemptionExplanationTests {
    @Test func aFailedRedemptionSaysWhatToDo() {
        let offer = ResolvedOffer(
            offer: Offer(id: UUID(), retailerID: UUID(), major: 1, minor: 1, title: "sushi", updatedAt: Date()),
            retailer: CatalogRetailer(id: UUID(), name: "Matey's", uuid: UUID()))
        let limit = ClientError.server(status: 409, code: .limitReached, message: "limit").explainingRedemption(of: offer)
        #expect(limit.description.contains("\"sushi\" cannot be redeemed again"))
        let lost = ClientError.network("timed out").explainingRedemption(of: offer)
        #expect(lost.description.contains("timed out; run the same `loyalty redeem` again"))
        // The server's reason, which may be that the offer has not started.
        let early = ClientError.server(status: 410, code: nil, message: "the offer has not started yet")
            .explainingRedemption(of: offer)
        #expect(early.description.contains("\"sushi\" cannot be redeemed: the offer has not started yet"))
        let other = ClientError.notFound(.notCached(catalogPartial: false))
        #expect(other.explainingRedemption(of: offer).description == other.description)
    }
}
