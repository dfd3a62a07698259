import Foundation
import HTTPClient
import LoyaltyTesting
import Postgres
import Synchronization
import Testing

/// Two `loyalty-server` processes on one PostgreSQL database, as behind a load balancer: whatever one instance
/// answers, the other agrees with, because neither keeps state between requests. With LOYALTY_TEST_PGBOUNCER=1
/// (make check's pgbouncer part) both reach the database through PgBouncer in transaction pooling mode.
@Suite struct TwoInstanceTests {
    @Test func twoInstancesOnOneDatabaseAgreeOnLimitsReplaysCursorsAndETags() throws {
        let database = "instances_\(UUID().uuidString.prefix(8).lowercased())"
        let directURL = try EmbeddedPostgres.shared().createDatabase(database)
        var databaseURL = directURL
        if ProcessInfo.processInfo.environment["LOYALTY_TEST_PGBOUNCER"] == "1" {
            databaseURL = try PgBouncer.shared().conninfo(database: database)
        }
        // The catalog check's LISTEN goes straight to PostgreSQL (PgBouncer's transaction pooling cannot carry it).
        let environment = ["DATABASE_NOTIFY_URL": directURL]
        let adminToken = "two-instances-\(UUID().uuidString)"
        let first = try LoyaltyServerProcess(databaseURL: databaseURL, environment: environment, adminToken: adminToken)
        defer { first.stop() }
        let second = try LoyaltyServerProcess(databaseURL: databaseURL, environment: environment, adminToken: adminToken)
        defer { second.stop() }
        let instances = [first.url, second.url]

        // The operator token and a retailer key work on both: credentials live in the database.
        let retailer = try call(first.url, "POST", "/v1/retailers", token: adminToken, json: ["name": "Matey's"])
        let apiKey = try #require(retailer.object["api_key"] as? String, "\(retailer.text)")
        let offer = try call(
            second.url, "PUT", "/v1/retailer/offers/1/1", token: apiKey,
            json: ["title": "30% off sushi", "total_limit": 12, "per_shopper_limit": 2])
        let offerID = try #require(offer.object["id"] as? String, "\(offer.text)")
        let shoppers = try (0..<10).map { index in
            try #require(
                try call(instances[index % 2], "POST", "/v1/accounts", json: [:]).object["device_token"] as? String)
        }

        // Each has seen the offer near its beacon: the server redeems only offers in the account's seen set.
        let seen: [String: Any] = [
            "items": [["offer_id": offerID, "seen_at": ISO8601DateFormatter().string(from: Date())]]
        ]
        for shopper in shoppers { _ = try call(instances[0], "POST", "/v1/seen", token: shopper, json: seen) }

        // 40 redemptions at once, each shopper's four split across the instances: 12 in all, 2 at most each.
        let answers = Mutex<[(shopper: Int, status: Int)]>([])
        concurrently(40) { request in
            let shopper = request % 10
            let status =
                (try? call(
                    instances[request % 2], "POST", "/v1/redemptions", token: shoppers[shopper],
                    json: ["offer_id": offerID]
                ).status) ?? 0
            answers.withLock { $0.append((shopper, status)) }
        }
        let statuses = answers.withLock { $0 }
        #expect(statuses.filter { $0.status == 201 }.count == 12, "\(statuses.map(\.status))")
        #expect(statuses.allSatisfy { $0.status == 201 || $0.status == 409 }, "\(statuses.map(\.status))")
        for shopper in 0..<10 {
            #expect(statuses.filter { $0.shopper == shopper && $0.status == 201 }.count <= 2)
            let history = try call(instances[shopper % 2], "GET", "/v1/redemptions", token: shoppers[shopper])
            #expect(
                (history.object["redemptions"] as? [Any])?.count
                    == statuses.filter { $0.shopper == shopper && $0.status == 201 }.count)
        }
        let stats = try call(first.url, "GET", "/v1/retailer/stats", token: apiKey)
        let counted = (stats.object["offers"] as? [[String: Any]])?.first
        #expect(counted?["redemptions"] as? Int == 12 && counted?["remaining"] as? Int == 0, "\(stats.text)")

        // One Idempotency-Key sent six times at once, three to each instance: one redemption, five replays of it.
        let pizza = try call(
            first.url, "PUT", "/v1/retailer/offers/1/2", token: apiKey, json: ["title": "pizza, buy one get one"])
        let pizzaID = try #require(pizza.object["id"] as? String)
        let shopper = try #require(
            try call(second.url, "POST", "/v1/accounts", json: [:]).object["device_token"] as? String)
        let seenPizza: [String: Any] = [
            "items": [["offer_id": pizzaID, "seen_at": ISO8601DateFormatter().string(from: Date())]]
        ]
        _ = try call(first.url, "POST", "/v1/seen", token: shopper, json: seenPizza)
        let replies = Mutex<[Reply]>([])
        concurrently(6) { request in
            if let reply = try? call(
                instances[request % 2], "POST", "/v1/redemptions", token: shopper, json: ["offer_id": pizzaID],
                headers: ["Idempotency-Key": "till-7-receipt-42"])
            {
                replies.withLock { $0.append(reply) }
            }
        }
        let redeemed = replies.withLock { $0 }
        #expect(redeemed.count == 6 && redeemed.allSatisfy { $0.status == 201 }, "\(redeemed.map(\.text))")
        #expect(Set(redeemed.compactMap { $0.object["redemption_id"] as? String }).count == 1)
        #expect(Set(redeemed.compactMap { $0.object["code"] as? String }).count == 1)
        #expect(redeemed.filter { $0.headers["idempotent-replayed"] == "true" }.count == 5)

        // A cursor and an ETag from one instance are good on the other: 304, then a delta.
        let phone = shoppers[0]
        let full = try call(first.url, "GET", "/v1/catalog", token: phone)
        let cursor = try #require(full.object["cursor"] as? String)
        let etag = try #require(full.headers["etag"])
        #expect(
            try call(second.url, "GET", "/v1/catalog", token: phone, headers: ["If-None-Match": etag]).status == 304)
        #expect(try call(second.url, "DELETE", "/v1/retailer/offers/1/2", token: apiKey).status == 204)
        let delta = try call(second.url, "GET", "/v1/catalog?since=\(cursor)", token: phone)
        #expect(delta.status == 200 && delta.object["full"] as? Bool == false, "\(delta.text)")
        #expect((delta.object["removed"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [pizzaID])
        let newTag = try #require(delta.headers["etag"])
        #expect(newTag != etag)
        #expect(
            try call(first.url, "GET", "/v1/catalog", token: phone, headers: ["If-None-Match": newTag]).status == 304)
        #expect(try call(first.url, "GET", "/v1/catalog", token: phone, headers: ["If-None-Match": etag]).status == 200)
    }
}

/// Runs `body(0..<count)` on `count` threads released together, and waits for all of them.
private func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        Thread {
            start.wait()
            body(index)
            done.leave()
        }.start()
    }
    for _ in 0..<count { start.signal() }
    done.wait()
}
