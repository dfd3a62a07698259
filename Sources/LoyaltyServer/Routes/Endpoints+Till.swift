import Foundation
import HTTPServer
import LoyaltyAPI

/// The till: a till key checks and accepts its retailer's redemption codes and can do nothing else. The
/// console's till page does the same as its retailer.
extension Endpoints {
    var tillRoutes: [Route] {
        [
            Route("POST", "/v1/till/check", tillKey, checkCode),
            Route("POST", "/v1/till/accept", tillKey, acceptCode),
        ]
    }

    func checkCode(_ request: HTTPRequest, _ till: TillCaller) throws -> HTTPResponse {
        let code = try RedemptionCode.normalized(request.decodeBody(TillCodeRequest.self).code)
        return .json(200, try database.checkCode(code, retailerID: till.retailerID))
    }

    func acceptCode(_ request: HTTPRequest, _ till: TillCaller) throws -> HTTPResponse {
        let key = try idempotencyKey(request)
        let code = try RedemptionCode.normalized(request.decodeBody(TillCodeRequest.self).code)
        let (accepted, replayed) = try database.acceptCode(
            code, retailerID: till.retailerID, tillKeyID: till.keyID, tillName: till.name, idempotencyKey: key)
        return .json(200, accepted, headers: replayed ? ["Idempotent-Replayed": "true"] : [:])
    }
}

/// Who works a till: a till key, or the retailer signed in to the console (whose acceptances say "console").
struct TillCaller: Sendable {
    let retailerID: UUID
    /// Nil for the console.
    let keyID: UUID?
    let name: String
}
