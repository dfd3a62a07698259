import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Testing

@testable import LoyaltyServer

@Suite struct MetricsTests {
    /// A request that arrives while every pooled connection is lent out waits for one, and /metrics counts
    /// that wait and its time; callers that found a connection free add nothing.
    @Test func aRequestThatWaitsForTheDatabasePoolIsCounted() throws {
        let server = try TestServer()
        let shopper = try server.createAccount()
        #expect(try value("loyalty_db_pool_waits_total", in: server) == 0)
        #expect(try value("loyalty_db_pool_wait_seconds_total", in: server) == 0)

        let answered = DispatchSemaphore(value: 0)
        let status = LockedStatus()
        try holdingEveryConnection(of: server.pool) {
            Thread {
                status.set((try? server.catalog(shopper).status) ?? 0)
                answered.signal()
            }.start()
            // Until the request blocks in the pool (or, wrongly, is answered); it cannot finish before release.
            while server.pool.waitingCallers == 0, status.get() == 0 { usleep(1_000) }
            #expect(server.pool.waitingCallers == 1)
            #expect(answered.wait(timeout: .now()) == .timedOut)
        }
        answered.wait()
        #expect(status.get() == 200)
        #expect(try value("loyalty_db_pool_waits_total", in: server) == 1)
        #expect(try value("loyalty_db_pool_wait_seconds_total", in: server) > 0)
        #expect(try value("loyalty_db_pool_connections_in_use", in: server) == 0)
    }

    /// Live offers, live stores, retailers and the feed version follow puts and deletes.
    @Test func catalogSizeFollowsPutsAndDeletes() throws {
        let server = try TestServer()
        #expect(try catalogSize(server) == [0, 0, 0])
        let versionAtStart = try value("loyalty_catalog_feed_version", in: server)

        let retailer = try server.registerRetailer()
        try server.putOffer(retailer, major: 1, minor: 1, OfferDraft(title: "sushi"))
        try server.putOffer(retailer, major: 1, minor: 2, OfferDraft(title: "pizza"))
        try server.putStore(
            retailer, "carnaby", StoreDraft(name: "Carnaby", latitude: 51.5136, longitude: -0.1365, radiusMetres: 80))
        #expect(try catalogSize(server) == [2, 1, 1])
        let versionAfterPuts = try value("loyalty_catalog_feed_version", in: server)
        #expect(versionAfterPuts > versionAtStart)

        #expect(try server.request("DELETE", "/v1/retailer/offers/1/2", token: retailer.apiKey).status == 204)
        #expect(try server.request("DELETE", "/v1/retailer/stores/carnaby", token: retailer.apiKey).status == 204)
        #expect(try catalogSize(server) == [1, 0, 1])
        #expect(try value("loyalty_catalog_feed_version", in: server) > versionAfterPuts)
    }

    /// Offers, stores, retailers.
    private func catalogSize(_ server: TestServer) throws -> [Double] {
        try ["loyalty_catalog_offers", "loyalty_catalog_stores", "loyalty_catalog_retailers"].map {
            try value($0, in: server)
        }
    }

    /// The value of an unlabelled sample in the server's /metrics.
    private func value(_ name: String, in server: TestServer) throws -> Double {
        let text = try server.request("GET", "/metrics", token: server.operatorToken).text
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(name + " ") }, "\(name) missing")
        return try #require(Double(line.dropFirst(name.count + 1)))
    }

    /// Runs `body` while this thread holds every connection of `pool`.
    private func holdingEveryConnection(of pool: PostgresPool, _ body: () throws -> Void) throws {
        func hold(_ remaining: Int) throws {
            guard remaining > 0 else { return try body() }
            try pool.withConnection { _ in try hold(remaining - 1) }
        }
        try hold(pool.size)
    }
}

private final class LockedStatus: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var status = 0

    func set(_ value: Int) { lock.withLock { status = value } }
    func get() -> Int { lock.withLock { status } }
}
