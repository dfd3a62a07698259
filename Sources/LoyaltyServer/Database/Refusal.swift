import Foundation

/// Outcomes of the store that are the caller's doing, not the database's. Each maps to one HTTP answer.
enum Refusal: Error, Equatable {
    case notFound
    case uuidTaken
    case nameTaken
    case limitReached(String)
    case offerUnavailable(String)
    /// Outside the offer's weekly hours (its schedule, given).
    case outOfHours(String)
    /// Redeeming an offer the account has not seen.
    case offerNotSeen
    /// Seeing or redeeming an offer on a secure beacon (`MAJOR:MINOR`) without a recent verified sighting of it.
    case presenceNotVerified(beacon: String)
    case cursorExpired
    case linkCodeInvalid
    case idempotencyKeyReused
    /// No redemption of the asking retailer has the code.
    case codeUnknown
    case codeAlreadyAccepted(at: Date, till: String)
    case codeExpired(endedAt: Date)
    case codeOfferRemoved
    /// The code's account was deleted before a till accepted it.
    case codeAccountDeleted
    /// The caller's account was deleted while its request waited (another device deleted it).
    case accountDeleted
}
