import Foundation
import LoyaltyAPI
import LoyaltyClient

/// The JSON lines of `till check` and `till accept`.
extension ClientJSONLines {
    /// `till check` and `till accept`.
    public static func tillCode(_ code: TillCode, accepted: Bool) -> String {
        object([
            ("event", .string(accepted ? "code_accepted" : "code_checked")), ("code", .string(code.code)),
            ("status", .string(code.status.rawValue)), ("offer_id", id(code.offerID)),
            ("major", .int(Int(code.major))), ("minor", .int(Int(code.minor))), ("title", .string(code.title)),
            ("redeemed_at", timestamp(code.redeemedAt)), ("accepted_at", timestamp(code.acceptedAt)),
            ("accepted_till", optional(code.acceptedTill)),
        ])
    }
}
