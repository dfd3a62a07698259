import Foundation
import LoyaltyAPI
import LoyaltyClient

/// `r` during a scan: redeems the offer on screen as `loyalty redeem` would, through the scan's own API
/// client, so a Ctrl-C abandons a request to a server that hangs as it abandons the scan's syncs.
public struct ScanRedemption {
    /// How to redeem, or why this device cannot (no account).
    private let redeemer: Result<Redeemer, ClientError>

    public init(_ redeemer: Result<Redeemer, ClientError>) { self.redeemer = redeemer }

    /// What came of a redemption: the line that says so, and the redemption when it went through.
    public struct Outcome {
        public var line: String
        public var redemption: Redemption?
        /// Whether asking again can still redeem it (not after a definite refusal).
        public var canRetry: Bool
        /// The offer's title as the line quotes it (escaped).
        var title: String
    }

    /// Redeems the offer on screen and says what came of it (nil: no offer on screen). `show` shows the offer
    /// that takes its place.
    public func redeemCurrent(
        of offers: OfferSession, show: (OfferPresentation) -> () -> Void = { _ in {} }
    ) throws(ClientError) -> Outcome? {
        guard let offer = offers.current?.offer else { return nil }
        return try redeem(offer, of: offers, retry: "press r to try again", show: show)
    }

    /// Redeems `offer` (the one on screen, or one a notification showed). Redeemed, or refused for good, an
    /// offer on screen leaves it and the next waiting one shows. Otherwise (the network, the server's fault,
    /// a Ctrl-C) it stays for another try (`retry` says how): it is already recorded as seen, so no later
    /// scan would show it again, and the line says how to redeem it after the scan.
    public func redeem(
        _ offer: ResolvedOffer, of offers: OfferSession, retry: String, show: (OfferPresentation) -> () -> Void
    ) throws(ClientError) -> Outcome {
        let title = TerminalText.escaped(offer.offer.title)
        let onScreen = offers.current?.offer.offer.id == offer.offer.id
        do throws(ClientError) {
            let redemption = try redeemer.get().redeem(offer)
            if onScreen { try offers.dismiss(show: show) }
            return Outcome(
                line: ClientText.redeemed(title: title, code: TerminalText.escaped(redemption.code)),
                redemption: redemption, canRetry: false, title: title)
        } catch {
            let retry = "\(retry), or later run `loyalty redeem \(offer.offer.id.uuidString.lowercased())`"
            let explained = error.explainingRedemption(of: offer, retry: retry)
            let failure = "could not redeem \"\(title)\": \(TerminalText.escaped(explained.description))"
            if error.isDefiniteRefusal {
                if onScreen { try offers.dismiss(show: show) }
                return Outcome(line: failure, redemption: nil, canRetry: false, title: title)
            }
            // A network failure's explanation already says how to retry.
            if case .network = error { return Outcome(line: failure, redemption: nil, canRetry: true, title: title) }
            return Outcome(line: failure + "; " + retry, redemption: nil, canRetry: true, title: title)
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
