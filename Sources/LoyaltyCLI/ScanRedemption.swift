import Foundation
import LoyaltyAPI
import LoyaltyClient

/// `r` during a scan: redeems the offer on screen as `loyalty redeem` would, through the scan's own API
/// client, so a Ctrl-C abandons a request to a server that hangs as it abandons the scan's syncs.
public struct ScanRedemption {
    /// How to redeem, or why this device cannot (no account).
    private let redeemer: Result<Redeemer, ClientError>

    public init(_ redeemer: Result<Redeemer, ClientError>) { self.redeemer = redeemer }

    /// Redeems the offer on screen and returns the line that says what came of it, and whether it was
    /// redeemed (nil: no offer on screen).
    /// Redeemed, or refused for good, the offer leaves the screen and the next waiting one shows. Otherwise
    /// (the network, the server's fault, a Ctrl-C) it stays for another `r`: it is already recorded as seen,
    /// so no later scan would show it again, and the line says how to redeem it after the scan.
    public func redeemCurrent(of offers: OfferSession) throws(ClientError) -> (line: String, redeemed: Bool)? {
        guard let offer = offers.current?.offer else { return nil }
        let title = TerminalText.escaped(offer.offer.title)
        do throws(ClientError) {
            let redemption = try redeemer.get().redeem(offer)
            try offers.dismiss()
            return ("redeemed \"\(title)\": show code \(TerminalText.escaped(redemption.code)) at the till", true)
        } catch {
            let retry = "press r to try again, or later run `loyalty redeem \(offer.offer.id.uuidString.lowercased())`"
            let explained = error.explainingRedemption(of: offer, retry: retry)
            let failure = "could not redeem \"\(title)\": \(TerminalText.escaped(explained.description))"
            if error.isDefiniteRefusal {
                try offers.dismiss()
                return (failure, false)
            }
            if case .network = error { return (failure, false) }  // its explanation already says how to retry
            return (failure + "; " + retry, false)
        }
    }
}

extension ClientError {
    /// The server refused this very request and sending it again cannot change that: the offer is gone,
    /// its limit is reached, the request is malformed. Not a timeout (408) or a rate limit (429), and not
    /// a refused device token, which `loyalty account link` fixes.
    var isDefiniteRefusal: Bool {
        guard case .server(let status, _, _) = self else { return false }
        return (400..<500).contains(status) && status != 408 && status != 429
    }
}
