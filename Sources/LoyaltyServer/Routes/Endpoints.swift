import Foundation
import HTTPServer
import LoyaltyAPI

/// The handlers of the routes, grouped by caller (`Endpoints+Operations`, `+Retailer`, `+Till`, `+Shopper`,
/// `+Console`), and the credentials they take. Handlers throw `APIFailure`, `Refusal` or database errors;
/// `LoyaltyService` turns them into answers.
struct Endpoints: Sendable {
    let database: Database
    let operatorTokenDigest: [UInt8]
    let openAPIDocument: [UInt8]
    /// Seals secure beacons' identity keys.
    let beaconKeyring: BeaconKeyring
    /// Resolves what devices heard of secure beacons.
    let secureBeacons: SecureBeaconTable
    let metrics: Metrics
    let rateLimiter: RateLimiter
    /// The service's log: for events that are not one request's (a flood of sightings, an impossible journey).
    var log: @Sendable (String) -> Void = ServerLog.standardError
    /// Such events logged once per device an hour.
    let deviceEventLog = LogOnce(period: 3600)
    /// Catalog pages built at once, one per core (building is all CPU): a page costs its handler a few times its
    /// size while built, so this bounds what pages being built hold, as `maxAnswerBytesInFlight` bounds those
    /// waiting to be sent (OPERATIONS.md, "Connection and memory limits").
    let catalogPageBuilds = DispatchSemaphore(value: max(2, ProcessInfo.processInfo.activeProcessorCount))

    /// Every route of the API.
    var routes: [Route] { operationsRoutes + retailerRoutes + tillRoutes + shopperRoutes + consoleRoutes }

    // MARK: Parameters

    /// The request's Idempotency-Key (a redemption's, a till's accept), if it sent one.
    func idempotencyKey(_ request: HTTPRequest) throws(APIFailure) -> String? {
        guard let key = request.header("idempotency-key") else { return nil }
        guard !key.isEmpty, key.count <= 200, key.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) })
        else {
            throw APIFailure(
                400, .badRequest, "Idempotency-Key must be 1 to 200 printable ASCII characters",
                field: "Idempotency-Key")
        }
        return key
    }

    func beacon(_ request: HTTPRequest) throws(APIFailure) -> (major: UInt16, minor: UInt16) {
        do {
            return (
                try Validation.beaconNumber(request.pathParameters["major"] ?? "", field: "major"),
                try Validation.beaconNumber(request.pathParameters["minor"] ?? "", field: "minor")
            )
        } catch {
            throw APIFailure.invalid(error)
        }
    }

    func cursor(_ request: HTTPRequest) throws(APIFailure) -> FeedCursor? {
        guard let text = request.query["since"], !text.isEmpty else { return nil }
        guard let cursor = FeedCursor(text) else {
            throw APIFailure(
                400, .badRequest, "since must be a cursor this server returned", field: "since")
        }
        return cursor
    }
}
