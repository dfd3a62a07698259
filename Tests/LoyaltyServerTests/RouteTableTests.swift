import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyServer

/// The route table, walked: a route that names a caller refuses a request without a credential (401) and one with
/// another kind's (403) before its handler runs, whatever its path and body; and writes nothing for either.
@Suite struct RouteTableTests {
    @Test(arguments: Transport.allCases)
    func everyRouteRefusesAMissingAndAWrongCredential(_ transport: Transport) throws {
        let server = try TestServer(transport)
        let retailer = try server.registerRetailer()
        let device = try server.createAccount()
        let before = try server.request("GET", "/v1/retailer/offers", token: retailer.apiKey).text
        let routes = Endpoints.unconnected.routes.filter { $0.caller != .anyone }
        #expect(routes.count >= 30)
        for route in routes {
            let path = route.pattern
                .replacingOccurrences(of: "{major}", with: "1").replacingOccurrences(of: "{minor}", with: "1")
                .replacingOccurrences(of: "{id}", with: UUID().uuidString)
                .replacingOccurrences(of: "{store_id}", with: "docks")
            let body: [UInt8]? = ["GET", "DELETE"].contains(route.method) ? nil : Array("{}".utf8)
            let missing = try server.request(route.method, path, body: body)
            #expect(missing.status == 401, "\(route.name) without a credential: \(missing.status) \(missing.text)")
            // Another kind's valid credential: a device token where a retailer's key is due, and the other way.
            let other = route.caller == .device ? retailer.apiKey : device.deviceToken
            let wrong = try server.request(route.method, path, token: other, body: body)
            #expect(wrong.status == 403, "\(route.name) with another kind's credential: \(wrong.status) \(wrong.text)")
        }
        #expect(try server.request("GET", "/v1/retailer/offers", token: retailer.apiKey).text == before)
    }

    /// The operator's metrics are not for everyone: the route names and counts show what a server does.
    @Test func metricsAreTheOperators() throws {
        let server = try TestServer()
        #expect(try server.request("GET", "/metrics").status == 401)
        let answer = try server.request("GET", "/metrics", token: server.operatorToken)
        #expect(answer.status == 200 && answer.text.contains("loyalty_http_requests_total"))
    }
}
