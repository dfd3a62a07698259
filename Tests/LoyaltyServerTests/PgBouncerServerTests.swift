import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Testing

@testable import LoyaltyServer

/// The service with its pool behind PgBouncer in transaction pooling mode, in every `make test` run; make check's
/// pgbouncer part runs the whole suite that way.
@Suite struct PgBouncerServerTests {
    /// Register, put offers, sync (full, 304, delta), push seen, redeem (with a replay and a limit): every kind of
    /// statement the service sends (single statements, REPEATABLE READ snapshots, row locks) works through it.
    @Test(arguments: Transport.allCases) func aShopperStoryWorksThroughPgBouncer(_ transport: Transport) throws {
        let server = try TestServer(transport, bouncer: try PgBouncer.shared())
        #expect(server.conninfo.contains("port=\(try PgBouncer.shared().port) "))
        #expect(try server.request("GET", "/readyz").status == 200)
        let retailer = try server.registerRetailer()
        let sushi = try server.putOffer(retailer, major: 1, minor: 1, OfferDraft(title: "sushi", totalLimit: 5))
        let phone = try server.createAccount()

        let full = try server.catalog(phone)
        let page: CatalogPage = try full.decode()
        #expect(full.status == 200 && page.offers.map(\.id) == [sushi.id])
        #expect(try server.catalog(phone, etag: full.headers["etag"]).status == 304)
        let pizza = try server.putOffer(retailer, major: 1, minor: 2, OfferDraft(title: "pizza"))
        let delta: CatalogPage = try server.catalog(phone, since: page.cursor).decode()
        #expect(delta.offers.map(\.id) == [pizza.id])

        let pushed: SeenPushResult = try server.request(
            "POST", "/v1/seen", token: phone.deviceToken,
            json: SeenPush(items: [SeenItem(offerID: sushi.id, seenAt: server.clock.read())])
        ).decode()
        #expect(pushed.added == 1)

        let redeemed = try server.redeem(phone, sushi.id, key: "till-1")
        let replayed = try server.redeem(phone, sushi.id, key: "till-1")
        #expect(redeemed.status == 201 && replayed.status == 201)
        #expect(replayed.headers["idempotent-replayed"] == "true")
        #expect(try replayed.decode(Redemption.self) == (try redeemed.decode(Redemption.self)))
        let again = try server.redeem(phone, sushi.id, key: "till-2")
        #expect(again.status == 409 && again.errorCode == .limitReached)
    }
}
