import Foundation
import HTTPServer
import LoyaltyAPI

/// Till keys (managed with the retailer's credentials) and the till itself: a till key checks and accepts its
/// retailer's redemption codes and can do nothing else. The console's till page does the same as its retailer.
extension Endpoints {
    var tillRoutes: [(method: String, pattern: String, handler: Handler)] {
        [
            ("POST", "/v1/retailer/till-keys", createTillKey),
            ("GET", "/v1/retailer/till-keys", listTillKeys),
            ("DELETE", "/v1/retailer/till-keys/{id}", revokeTillKey),
            ("POST", "/v1/till/check", checkCode),
            ("POST", "/v1/till/accept", acceptCode),
        ]
    }

    func createTillKey(_ request: HTTPRequest) throws -> HTTPResponse {
        let retailer = try requireRetailerManagingCredentials(request).retailer
        let draft = try request.decodeBody(TillKeyDraft.self)
        return .json(201, try database.createTillKey(retailerID: retailer.id, name: draft.name))
    }

    func listTillKeys(_ request: HTTPRequest) throws -> HTTPResponse {
        .json(200, try database.tillKeys(retailerID: try requireRetailer(request).id))
    }

    func revokeTillKey(_ request: HTTPRequest) throws -> HTTPResponse {
        let retailer = try requireRetailerManagingCredentials(request).retailer
        guard let keyID = request.pathParameters["id"].flatMap(UUID.init(uuidString:)),
            try database.revokeTillKey(keyID, retailerID: retailer.id)
        else { throw APIFailure(404, .notFound, "this retailer has no such till key") }
        return HTTPResponse(status: 204)
    }

    func checkCode(_ request: HTTPRequest) throws -> HTTPResponse {
        let till = try requireTill(request)
        let code = try RedemptionCode.normalized(request.decodeBody(TillCodeRequest.self).code)
        return .json(200, try database.checkCode(code, retailerID: till.retailerID))
    }

    func acceptCode(_ request: HTTPRequest) throws -> HTTPResponse {
        let till = try requireTill(request)
        let key = try idempotencyKey(request)
        let code = try RedemptionCode.normalized(request.decodeBody(TillCodeRequest.self).code)
        let (accepted, replayed) = try database.acceptCode(
            code, retailerID: till.retailerID, tillKeyID: till.keyID, tillName: till.name, idempotencyKey: key)
        return .json(200, accepted, headers: replayed ? ["Idempotent-Replayed": "true"] : [:])
    }

    /// A till key, or a retailer signed in to the console (whose acceptances say "console"). The retailer's API
    /// key itself is refused here, as a till key is on the retailer's routes.
    private func requireTill(_ request: HTTPRequest) throws -> (retailerID: UUID, keyID: UUID?, name: String) {
        switch try principal(request) {
        case .till(let till): return (till.retailerID, till.keyID, till.name)
        case .console(let access, _): return (access.retailer.id, nil, "console")
        default: throw forbidden("a till key")
        }
    }
}
