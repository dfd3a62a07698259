import LoyaltyAPI
import LoyaltyClient

extension ClientError {
    /// A failed redemption of `offer` as the shopper at the till needs it: what happened and what to do;
    /// `retry` says how to send the same request again.
    func explainingRedemption(
        of offer: ResolvedOffer, retry: String = "run the same `loyalty redeem` again"
    ) -> ClientError {
        switch self {
        case .server(409, .limitReached, _):
            .server(
                status: 409, code: .limitReached,
                message: "\"\(offer.offer.title)\" cannot be redeemed again: its redemption limit is reached")
        case .server(409, .offerNotSeen, _):
            .server(
                status: 409, code: .offerNotSeen,
                message: "\"\(offer.offer.title)\" cannot be redeemed yet: this account has not been near its beacon; "
                    + "go to the shop and run `loyalty scan` until the offer shows, then redeem it")
        case .network(let message):
            .network("\(message); \(retry): it resends the same request, so it never redeems twice")
        case .server(410, _, let reason):
            // The server says which: removed, ended, or not started yet.
            .server(
                status: 410, code: .offerUnavailable,
                message: "\"\(offer.offer.title)\" cannot be redeemed: \(reason); `loyalty sync` updates the offers")
        default: self
        }
    }
}
