import Foundation
import HTTPServer
import JSONCoding
import LoyaltyAPI
import Postgres

/// An error answer: the HTTP status and the JSON body of openapi.yaml's Error.
struct APIFailure: Error {
    var status: Int
    var body: APIErrorBody
    var headers: [String: String] = [:]

    init(_ status: Int, _ code: APIErrorCode, _ message: String, field: String? = nil) {
        self.status = status
        body = APIErrorBody(code: code, message: message, field: field)
    }

    static func invalid(_ error: ValidationError) -> APIFailure {
        APIFailure(422, .validationFailed, "\(error.field) \(error.message)", field: error.field)
    }

    /// No credential came (RFC 6750 section 3: the challenge then names no error).
    static let unauthorized: APIFailure = {
        var failure = APIFailure(
            401, .unauthorized, "send a valid token as 'Authorization: Bearer <token>'")
        failure.headers["WWW-Authenticate"] = #"Bearer realm="loyalty""#
        return failure
    }()

    /// A bearer token came, and it is unknown, revoked or expired, or its account was deleted.
    static let invalidToken: APIFailure = {
        var failure = APIFailure(
            401, .unauthorized, "this token is unknown, revoked or expired, or its account was deleted; send a valid one as "
                + "'Authorization: Bearer <token>'")
        failure.headers["WWW-Authenticate"] = #"Bearer realm="loyalty", error="invalid_token""#
        return failure
    }()

    static func rateLimited(retryAfter seconds: Int) -> APIFailure {
        var failure = APIFailure(
            429, .rateLimited, "too many attempts; retry in \(seconds) s (the Retry-After header says when)")
        failure.headers["Retry-After"] = String(seconds)
        return failure
    }

    /// Also what a request in a failover's window gets (the primary gone, none elected yet): Retry-After tells
    /// clients and balancers when to come back, as a Patroni failover takes seconds (docs/SCALING.md).
    static let databaseUnavailable: APIFailure = {
        var failure = APIFailure(503, .databaseUnavailable, "the database is unavailable; retry in a few seconds")
        failure.headers["Retry-After"] = "2"
        return failure
    }()

    /// The answer to any error a handler throws. Database errors other than "unavailable" are bugs
    /// or broken invariants: the caller logs `internalDetail`, the client gets a plain 500.
    static func answering(_ error: any Error) -> (failure: APIFailure, internalDetail: String?) {
        switch error {
        case let failure as APIFailure:
            return (failure, nil)
        case let error as Refusal:
            return (APIFailure(refusal: error), nil)
        case let error as ValidationError:
            return (.invalid(error), nil)
        case let error as PostgresError where error.kind == .unavailable:
            return (.databaseUnavailable, nil)
        case let error as PostgresError where error.isDataException:
            // Data exception (a value PostgreSQL cannot store): validation should have caught it first.
            return (APIFailure(422, .validationFailed, "a value is out of the range the server can store"), "\(error)")
        default:
            return (APIFailure(500, .internalError, "unexpected error; the server log has the request id"), "\(error)")
        }
    }

    private init(refusal: Refusal) {
        switch refusal {
        case .notFound:
            self.init(404, .notFound, "no such resource")
        case .uuidTaken:
            self.init(
                409, .uuidTaken, "another retailer has this proximity UUID; omit uuid to be assigned one", field: "uuid"
            )
        case .nameTaken:
            self.init(
                409, .nameTaken, "another retailer's name reads the same as this one; choose a name of its own",
                field: "name")
        case .limitReached(let detail):
            self.init(409, .limitReached, detail)
        case .offerUnavailable(let detail):
            self.init(410, .offerUnavailable, detail)
        case .outOfHours(let schedule):
            self.init(
                409, .offerOutOfHours,
                "the offer is on only in its hours (\(schedule)), and it is not now: redeem it then")
        case .offerNotSeen:
            self.init(
                409, .offerNotSeen,
                "this account has not seen the offer: it is redeemed after a scan has shown it near its beacon "
                    + "(and sent it to POST /v1/seen)")
        case .presenceNotVerified(let beacon):
            let minutes = Int(SecureBeacon.presenceWindow / 60)
            self.init(
                409, .presenceNotVerified,
                "this offer is on the secure beacon \(beacon), and this account has no verified sighting of it in the "
                    + "last \(minutes) minutes: scan near the beacon with the service reachable (POST /v1/sightings "
                    + "with what was heard), then try again")
        case .cursorExpired:
            self.init(
                410, .cursorExpired, "this cursor can no longer be served; sync again without 'since'", field: "since")
        case .linkCodeInvalid:
            self.init(
                404, .linkCodeInvalid, "the link code is unknown, expired or used; create a new one", field: "code")
        case .idempotencyKeyReused:
            self.init(
                409, .idempotencyKeyReused, "this Idempotency-Key was used for another offer; use a new key",
                field: "Idempotency-Key")
        case .codeUnknown:
            self.init(404, .codeUnknown, "no redemption has this code; check it with the shopper", field: "code")
        case .codeAlreadyAccepted(let at, let till):
            self.init(
                409, .codeAlreadyAccepted,
                "this code was used at \(LoyaltyJSON.formatTimestamp(at)) at the till \"\(till)\"", field: "code")
        case .codeExpired(let endedAt):
            self.init(
                410, .codeExpired, "the offer of this code ended at \(LoyaltyJSON.formatTimestamp(endedAt))",
                field: "code")
        case .codeOfferRemoved:
            self.init(410, .codeOfferRemoved, "the offer of this code was removed", field: "code")
        case .codeAccountDeleted:
            self.init(
                410, .codeAccountDeleted,
                "the shopper deleted their account, and this unspent code was deleted with it: it cannot be accepted",
                field: "code")
        case .accountDeleted:
            self = .invalidToken
        }
    }
}
