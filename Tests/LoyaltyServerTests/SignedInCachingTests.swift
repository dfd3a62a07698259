import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

/// What a signed-in GET answers is its caller's own: no cache may keep it (issue 23, item 14).
@Suite struct SignedInCachingTests {
    @Test(arguments: Transport.allCases) func signedInAnswersSayNoStore(_ transport: Transport) throws {
        let server = try TestServer(transport)
        let matey = try server.registerRetailer()
        try server.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Sushi"))
        let login = try ConsoleLogin(server, apiKey: matey.apiKey)
        for path in ["/v1/retailer", "/v1/retailer/offers", "/v1/retailer/offers/export", "/v1/retailer/till-keys"] {
            let withKey = try server.request("GET", path, token: matey.apiKey)
            #expect(withKey.status == 200 && withKey.headers["cache-control"] == "no-store", "\(path): \(withKey.headers)")
            let withCookie = try server.request("GET", path, headers: login.headers())
            #expect(withCookie.headers["cache-control"] == "no-store", "\(path) from the console")
        }
        // The catalog keeps its own rule: stored, but revalidated with its ETag.
        let shopper = try server.createAccount()
        #expect(try server.catalog(shopper).headers["cache-control"] == "no-cache")
        #expect(try server.request("GET", "/healthz").headers["cache-control"] == nil)
    }
}
