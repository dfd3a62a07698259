import LoyaltyAPI
import LoyaltyClient

/// What the till commands print.
extension ClientText {
    /// `till check|accept`: the answer, or with `refusal` the reason a checked code must not be honoured.
    public static func till(_ answer: TillCode, accepted: Bool) -> (line: String, refused: Bool) {
        let code = TerminalText.escaped(answer.code)
        let offer =
            "\"\(TerminalText.escaped(answer.title))\" (\(answer.major):\(answer.minor)), redeemed \(timestamp(answer.redeemedAt))"
        switch (accepted, answer.status) {
        case (true, _): return ("accepted \(code): \(offer)", false)
        case (false, .valid): return ("\(code) is valid: \(offer)", false)
        case (false, .accepted):
            // Checking a used code is a refusal too: the cashier must not hand the offer over again.
            let till = TerminalText.escaped(answer.acceptedTill ?? "")
            return ("\(code) was used at \(timestamp(answer.acceptedAt)) at the till \"\(till)\": \(offer)", true)
        }
    }
}
