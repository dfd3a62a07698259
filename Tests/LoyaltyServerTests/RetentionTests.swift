import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Testing

@testable import LoyaltyServer

/// Seen records and verified sightings older than the retention period are purged; the retailer's figures keep
/// what they counted (docs/PRIVACY.md).
@Suite struct RetentionTests {
    /// Old rows go, in batches of one row here (so one shopper's rows of a day go in several batches); recent ones
    /// stay; figures, statistics and beacon health read the same before and after.
    @Test func oldRowsArePurgedAndFiguresKeepTheirCounts() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let sushi = try server.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Sushi", perShopperLimit: 5))
        let pizza = try server.putOffer(matey, major: 1, minor: 2, OfferDraft(title: "Pizza", showsPerDay: 2))
        let (ann, ben, cat) = (try server.createAccount(), try server.createAccount(), try server.createAccount())
        try server.see(ann, sushi.id, pizza.id)
        #expect(try server.redeem(ann, sushi.id).status == 201)
        try server.see(ben, sushi.id)
        server.clock.advance(by: 3600)
        try server.see(cat, pizza.id)
        try sighting(server, ann, matey)
        server.clock.advance(by: 150 * 86_400)
        try server.see(ben, pizza.id)
        try sighting(server, ben, matey)
        server.clock.advance(by: 40 * 86_400)

        let before = try readings(server, matey)
        let cutoff = server.clock.read().addingTimeInterval(-180 * 86_400)
        let purged = try server.database.purgeShopperData(before: cutoff, batch: 1)
        #expect(purged.seen == 4 && purged.sightings == 1)
        #expect(try count(server, "seen") == 1 && count(server, "verified_sightings") == 1, "the recent rows stay")
        #expect(try count(server, "offer_day_shows") == 1, "ben's recent show of the pizza is counted still, no older one")
        #expect(try readings(server, matey) == before)
        let again = try server.database.purgeShopperData(before: cutoff)
        #expect(again.seen == 0 && again.sightings == 0)
    }

    /// The scheduled purge runs with the server's retention and logs what it deleted.
    @Test func theScheduledPurgeUsesTheRetention() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let offer = try server.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Sushi"))
        let shopper = try server.createAccount()
        try server.see(shopper, offer.id)
        server.clock.advance(by: 10 * 86_400)
        let log = LogRecorder()
        try ScheduledPurge.purge(database: server.database, shopperDataRetention: 30 * 86_400, log: log.record)
        #expect(try count(server, "seen") == 1, "10 days old is inside 30 days")
        try ScheduledPurge.purge(database: server.database, shopperDataRetention: 7 * 86_400, log: log.record)
        #expect(try count(server, "seen") == 0)
        #expect(log.recorded.contains { $0.contains("\"shopper_data_purged\"") && $0.contains("\"seen\":1") }, "\(log.recorded)")
    }

    private func sighting(_ server: TestServer, _ device: DeviceCredentials, _ retailer: RetailerCredentials) throws {
        try server.pool.withConnection { connection in
            try connection.query(
                """
                INSERT INTO verified_sightings (account_id, retailer_id, major, minor, window_counter, heard_at)
                VALUES (\(device.accountID), \(retailer.id), 1, 1, 1, \(server.clock.read()))
                """)
        }
    }

    private func count(_ server: TestServer, _ table: String) throws -> Int {
        try server.pool.withConnection { connection in
            try connection.query(PostgresQuery(unsafeSQL: "SELECT count(*) AS n FROM \(table)"))[0].decode("n")
        }
    }

    /// What the retailer reads: figures of the last year, statistics, beacon health, the fleet.
    private func readings(_ server: TestServer, _ retailer: RetailerCredentials) throws -> [String] {
        try [
            "/v1/retailer/figures?days=366", "/v1/retailer/stats", "/v1/retailer/beacons?quiet_days=7",
            "/v1/retailer/fleet",
        ].map { target in
            let response = try server.request("GET", target, token: retailer.apiKey)
            try #require(response.status == 200, "\(target): \(response.text)")
            return response.text
        }
    }
}
