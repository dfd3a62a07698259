import Foundation
import LoyaltyAPI
import LoyaltyClient

/// The JSON lines of `till check` and `till accept`.
extension ClientJSONLines {
    /// `till check` and `till accept`.
    public static func tillCode(_ code: TillCode, accepted: Bool) -> String {
        object(
            TillCode.CodingKeys.self, event: accepted ? "code_accepted" : "code_checked",
            [
                .code: .string(code.code), .status: .string(code.status.rawValue), .offerID: id(code.offerID),
                .major: .int(Int(code.major)), .minor: .int(Int(code.minor)), .title: .string(code.title),
                .redeemedAt: timestamp(code.redeemedAt), .acceptedAt: timestamp(code.acceptedAt),
                .acceptedTill: optional(code.acceptedTill),
            ])
    }
}
