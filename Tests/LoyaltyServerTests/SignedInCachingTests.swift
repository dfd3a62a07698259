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
        let catalog = try server.catalog(shopper)
        #expect(catalog.headers["cache-control"] == "no-cache")
        // Its 304 too: a cache takes the 304's headers into the copy it keeps.
        let revalidated = try server.catalog(shopper, etag: catalog.headers["etag"])
        #expect(
            revalidated.status == 304 && revalidated.headers["cache-control"] == "no-cache", "\(revalidated.headers)")
        // A balancer's cached health would hide an outage.
        for path in ["/healthz", "/readyz"] {
            #expect(try server.request("GET", path).headers["cache-control"] == "no-store", "\(path)")
        }
    }
}
