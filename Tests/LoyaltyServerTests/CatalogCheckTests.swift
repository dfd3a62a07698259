import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Testing

@testable import LoyaltyServer

/// The catalog check in memory (`CatalogCheck`), across two servers on one database as behind a balancer: what one
/// server writes (a revocation, a catalog change) reaches the other's cache by notification, a cut listener makes
/// the server answer through the database until it listens again, and invalid tokens never take a valid one's place.
@Suite(.serialized) struct CatalogCheckTests {
    /// How long a notification may take to reach the other server here: far above the milliseconds it takes, so
    /// that only a lost one fails the test (docs/SCALING.md states the bound).
    private static let patience: Duration = .seconds(5)

    @Test func aRevocationThroughOneServerIsObservedThroughTheOther() throws {
        let first = try TestServer()
        let second = try TestServer(sharingDatabaseOf: first)
        try waitUntilTrusted(first, second)
        let owner = try first.createAccount()
        let devices = try (0..<25).map { index in try first.linkDevice(to: owner, name: "phone \(index)") }
        var tags: [String] = []
        for device in devices {
            let page = try second.catalog(device)
            #expect(page.status == 200)
            let tag = try #require(page.headers["etag"])
            #expect(try second.catalog(device, etag: tag).status == 304)
            tags.append(tag)
        }
        let check = try #require(second.database.catalogCheck)
        #expect(devices.allSatisfy { check.holds(digest: Secrets.digest(of: $0.deviceToken)) })

        var delays: [Duration] = []
        for (device, tag) in zip(devices, tags) {
            #expect(try first.request("DELETE", "/v1/devices/\(device.deviceID)", token: owner.deviceToken).status == 204)
            let revoked = ContinuousClock.now
            let status = try waitFor(within: Self.patience) {
                let status = try second.catalog(device, etag: tag).status
                return status == 304 ? nil : status
            }
            delays.append(ContinuousClock.now - revoked)
            #expect(status == 401)
        }
        delays.sort()
        print("catalog check: revocation seen by the other server, p50 \(delays[delays.count / 2]), "
            + "p99 \(delays[delays.count * 99 / 100]), max \(delays.last!)")
        #expect(!devices.contains { check.holds(digest: Secrets.digest(of: $0.deviceToken)) })
    }

    @Test func aCatalogWriteThroughOneServerEndsTheOthersNotModified() throws {
        let first = try TestServer()
        let second = try TestServer(sharingDatabaseOf: first)
        try waitUntilTrusted(first, second)
        let matey = try first.registerRetailer()
        try first.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Sushi"))
        let shopper = try first.createAccount()
        let tag = try #require(try second.catalog(shopper).headers["etag"])
        #expect(try second.catalog(shopper, etag: tag).status == 304)
        let directory = try second.request("GET", "/v1/directory", token: shopper.deviceToken)
        let directoryTag = try #require(directory.headers["etag"])

        try first.putOffer(matey, major: 1, minor: 2, OfferDraft(title: "Pizza"))
        let changed = ContinuousClock.now
        let status = try waitFor(within: Self.patience) {
            let status = try second.catalog(shopper, etag: tag).status
            return status == 304 ? nil : status
        }
        print("catalog check: a catalog write seen by the other server after \(ContinuousClock.now - changed)")
        #expect(status == 200)
        let page = try second.catalog(shopper, etag: tag).decode(CatalogPage.self)
        #expect(page.offers.map(\.title).sorted() == ["Pizza", "Sushi"])
        let directoryAgain = try second.request(
            "GET", "/v1/directory", token: shopper.deviceToken, headers: ["If-None-Match": directoryTag])
        #expect(directoryAgain.status == 200)
    }

    /// The listener's backend terminated: the server stops vouching for its cache, and a revocation and a catalog
    /// write made meanwhile are not missed; it listens again, reloads, and answers from memory again.
    @Test func aCutListenerFallsBackToTheDatabaseAndRecovers() throws {
        let first = try TestServer()
        let second = try TestServer(sharingDatabaseOf: first)
        try waitUntilTrusted(first, second)
        let check = try #require(second.database.catalogCheck)
        let owner = try first.createAccount()
        let phone = try first.linkDevice(to: owner)
        let tag = try #require(try second.catalog(phone).headers["etag"])
        #expect(try second.catalog(phone, etag: tag).status == 304)
        #expect(check.holds(digest: Secrets.digest(of: phone.deviceToken)))

        let listener = try #require(check.state.listenerPID)
        try first.pool.withConnection { connection in
            try connection.query("SELECT pg_terminate_backend(\(Int(listener)))")
        }
        // Once it noticed (a moment), it forgot every token: the revoked phone is looked up and refused.
        _ = try waitFor(within: Self.patience) { check.state.trusted ? nil : true }
        #expect(check.state.tokens == 0)
        try first.request("DELETE", "/v1/devices/\(phone.deviceID)", token: owner.deviceToken)
        #expect(try second.catalog(phone, etag: tag).status == 401)
        let matey = try first.registerRetailer()
        try first.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Sushi"))
        // Answered by the database while not listening, or by the head reloaded or notified since.
        #expect(try statusOnceNotModifiedEnds(second, owner, tag, within: Self.patience) == 200)
        try waitUntilListeningAgain(check, besides: listener)
        #expect(second.log.recorded.contains { $0.contains(#""event":"catalog_check_not_listening""#) })
        // Logged just after the head is trusted again.
        _ = try waitFor(within: Self.patience) {
            second.log.recorded.contains { $0.contains(#""event":"catalog_check_listening""#) } ? true : nil
        }
        let current = try #require(try second.catalog(owner).headers["etag"])
        #expect(try second.catalog(owner, etag: current).status == 304)
        #expect(check.holds(digest: Secrets.digest(of: owner.deviceToken)))
        #expect(!check.holds(digest: Secrets.digest(of: phone.deviceToken)))
    }

    /// A listener whose server stops (its backend stopped here, as a frozen primary would be) says nothing: without
    /// the heartbeat it would vouch for its head for ever. It stops vouching when the lease runs out, so the other
    /// server's write is seen through the database, and it listens again on a new connection.
    @Test func aListenerThatHearsNoHeartbeatStopsVouchingAndListensAgain() throws {
        try withAWriteTheListenerMisses { _, second, check, owner, tag, listener in
            #expect(try statusOnceNotModifiedEnds(second, owner, tag, within: CatalogCheck.heartbeatLease + Self.patience) == 200)
            try waitUntilListeningAgain(check, besides: listener)
            #expect(second.log.recorded.contains { $0.contains("heard none of its heartbeats") })
            let current = try #require(try second.catalog(owner).headers["etag"])
            #expect(current != tag)
            #expect(try second.catalog(owner, etag: current).status == 304)
        }
    }

    /// A device that shows a newer ETag than the cache holds (the other server's write, its notification not yet
    /// here: the listener's backend is stopped, within the heartbeat's lease) teaches the server the head at once.
    @Test func aNewerETagShownByADeviceEndsTheOlderOnesNotModified() throws {
        try withAWriteTheListenerMisses { first, second, check, owner, old, listener in
            let new = try #require(try first.catalog(owner).headers["etag"])
            #expect(new != old)
            // Not the cache's tag: read from the database, and answered with that tag.
            let answer = try second.catalog(owner, etag: new)
            #expect(answer.status == 304 || answer.headers["etag"] == new)
            #expect(check.state.trusted && check.state.listenerPID == listener, "the lease ran out: the test proves nothing")
            #expect(try second.catalog(owner, etag: old).status == 200)
        }
    }

    /// A server that cannot listen never answers from memory: what another server writes is seen at once.
    @Test func aServerThatCannotListenAnswersThroughTheDatabase() throws {
        let first = try TestServer()
        let deaf = try TestServer(
            sharingDatabaseOf: first, notificationsConninfo: "host=/nonexistent-loyalty-socket-dir port=1")
        let check = try #require(deaf.database.catalogCheck)
        let owner = try first.createAccount()
        let phone = try first.linkDevice(to: owner)
        let tag = try #require(try deaf.catalog(phone).headers["etag"])
        #expect(try deaf.catalog(phone, etag: tag).status == 304)
        #expect(!check.state.trusted && check.state.tokens == 0)

        let matey = try first.registerRetailer()
        try first.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Sushi"))
        #expect(try deaf.catalog(phone, etag: tag).status == 200)
        try first.request("DELETE", "/v1/devices/\(phone.deviceID)", token: owner.deviceToken)
        #expect(try deaf.catalog(phone, etag: tag).status == 401)
        #expect(!check.state.trusted && check.state.listenerPID == nil)
        let metrics = try deaf.request("GET", "/metrics", token: deaf.operatorToken).text
        #expect(metrics.contains("\nloyalty_catalog_check_listening 0\n"), "\(metrics)")
        #expect(metrics.contains("\nloyalty_catalog_check_from_memory_total 0\n"), "\(metrics)")
    }

    /// DATABASE_NOTIFY_URL through PgBouncer's transaction pooling takes the LISTEN but delivers nothing: the probe
    /// sent to the new listening connection never arrives, the server says once what to do and answers every check
    /// through the database. The same database straight to PostgreSQL: the probe arrives and checks come from memory.
    @Test func aListenerThroughATransactionPoolerIsNeverTrusted() throws {
        let direct = try TestServer()
        let pooled = try TestServer(
            sharingDatabaseOf: direct,
            notificationsConninfo: try PgBouncer.shared().conninfo(database: direct.databaseName))
        try waitUntilTrusted(direct)
        let check = try #require(pooled.database.catalogCheck)
        _ = try waitFor(within: Self.patience) { check.state.probeFailed ? true : nil }
        #expect(!check.state.trusted && check.state.tokens == 0 && check.state.listenerPID == nil)
        let errors = pooled.log.recorded.filter { $0.contains(#""event":"catalog_check_notifications_not_delivered""#) }
        #expect(errors.count == 1, "\(pooled.log.recorded)")
        #expect(errors.allSatisfy { $0.contains(#""level":"error""#) && $0.contains("must reach PostgreSQL directly") })

        let owner = try direct.createAccount()
        let tag = try #require(try pooled.catalog(owner).headers["etag"])
        #expect(try pooled.catalog(owner, etag: tag).status == 304)
        let matey = try direct.registerRetailer()
        try direct.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Sushi"))
        // Through the database: the other server's write is seen by the very next check.
        let changed = try pooled.catalog(owner, etag: tag)
        #expect(changed.status == 200)
        let newTag = try #require(changed.headers["etag"])
        // The first check looks the token up in the database; the second is answered from memory.
        for _ in 0..<2 { #expect(try direct.catalog(owner, etag: newTag).status == 304) }
        #expect(!check.state.trusted && check.state.probeFailed)

        let pooledMetrics = try pooled.request("GET", "/metrics", token: pooled.operatorToken).text
        for line in ["listening 0", "probe_failed 1", "from_memory_total 0"] {
            #expect(pooledMetrics.contains("\nloyalty_catalog_check_\(line)\n"), "\(pooledMetrics)")
        }
        let directMetrics = try direct.request("GET", "/metrics", token: direct.operatorToken).text
        for line in ["listening 1", "probe_failed 0"] {
            #expect(directMetrics.contains("\nloyalty_catalog_check_\(line)\n"), "\(directMetrics)")
        }
        #expect(!directMetrics.contains("\nloyalty_catalog_check_from_memory_total 0\n"), "\(directMetrics)")
    }

    /// Tokens that no device holds are never kept: they neither push out valid ones nor take memory; past its size,
    /// the cache drops the token used least recently.
    @Test func aFloodOfInvalidTokensDoesNotEvictValidOnes() throws {
        let server = try TestServer(deviceTokenCacheSize: 3)
        try waitUntilTrusted(server)
        let check = try #require(server.database.catalogCheck)
        let owner = try server.createAccount()
        let phones = try [owner] + (0..<3).map { try server.linkDevice(to: owner, name: "phone \($0)") }
        var tags: [String] = []
        for phone in phones.prefix(3) { tags.append(try #require(try server.catalog(phone).headers["etag"])) }
        #expect(check.state.tokens == 3)

        for index in 0..<300 {
            let forged = "ld_" + Hex.text(Array(Secrets.digest(of: "forged \(index)")))
            #expect(try server.request("GET", "/v1/catalog", token: forged).status == 401)
        }
        #expect(check.state.tokens == 3)
        #expect(phones.prefix(3).allSatisfy { check.holds(digest: Secrets.digest(of: $0.deviceToken)) })
        let metrics = try server.request("GET", "/metrics", token: server.operatorToken).text
        #expect(metrics.contains("\nloyalty_catalog_check_device_tokens 3\n"), "\(metrics)")
        #expect(metrics.contains("\nloyalty_catalog_check_listening 1\n"), "\(metrics)")

        // The first phone checked again, then a fourth device: the second phone, used least recently, makes room.
        #expect(try server.catalog(phones[0], etag: tags[0]).status == 304)
        _ = try server.catalog(phones[3])
        #expect(check.state.tokens == 3)
        #expect(!check.holds(digest: Secrets.digest(of: phones[1].deviceToken)))
        #expect([0, 2, 3].allSatisfy { check.holds(digest: Secrets.digest(of: phones[$0].deviceToken)) })
    }

    @Test func theLeastRecentlyUsedMapKeepsItsNewestEntries() {
        var map = LeastRecentlyUsed<Int, String>(capacity: 3)
        for key in 1...3 { map[key] = "\(key)" }
        #expect(map[1] == "1")
        map[4] = "4"
        #expect(!map.contains(2) && map.contains(1) && map.contains(3) && map.contains(4))
        // A removed entry's room is taken first; then the least recently used (1, read before 4 came) goes.
        map.removeValue(forKey: 3)
        map[5] = "5"
        #expect(map.count == 3 && [1, 4, 5].allSatisfy(map.contains))
        map[6] = "6"
        #expect(map.count == 3)
        #expect([4, 5, 6].allSatisfy(map.contains) && !map.contains(1))
        map.removeAll()
        #expect(map.count == 0 && map[1] == nil)
    }

    /// Two servers on one database, the second answering `owner`'s tag 304 from memory; then the second's listener's
    /// backend stopped (as a frozen primary would be) and an offer written through the first. `body` runs before the
    /// backend goes on, with both servers, the second's check, `owner`, the tag and the stopped backend's PID.
    private func withAWriteTheListenerMisses(
        _ body: (TestServer, TestServer, CatalogCheck, DeviceCredentials, String, Int32) throws -> Void
    ) throws {
        let first = try TestServer()
        let second = try TestServer(sharingDatabaseOf: first)
        try waitUntilTrusted(first, second)
        let check = try #require(second.database.catalogCheck)
        let owner = try first.createAccount()
        let tag = try #require(try second.catalog(owner).headers["etag"])
        #expect(try second.catalog(owner, etag: tag).status == 304)

        let listener = try #require(check.state.listenerPID)
        #expect(kill(listener, SIGSTOP) == 0)
        defer { kill(listener, SIGCONT) }
        let matey = try first.registerRetailer()
        try first.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Sushi"))
        try body(first, second, check, owner, tag, listener)
    }

    /// The status `server` answers `device`'s check with `etag`, once it is no longer 304.
    private func statusOnceNotModifiedEnds(
        _ server: TestServer, _ device: DeviceCredentials, _ etag: String, within patience: Duration
    ) throws -> Int {
        try waitFor(within: patience) {
            let status = try server.catalog(device, etag: etag).status
            return status == 304 ? nil : status
        }
    }

    /// Waits until `check` vouches again, on a listening connection other than `listener`.
    private func waitUntilListeningAgain(_ check: CatalogCheck, besides listener: Int32) throws {
        _ = try waitFor(within: Self.patience) { () -> Bool? in
            let state = check.state
            return state.trusted && state.listenerPID != nil && state.listenerPID != listener ? true : nil
        }
    }

    private func waitUntilTrusted(_ servers: TestServer...) throws {
        for server in servers {
            let check = try #require(server.database.catalogCheck)
            _ = try waitFor(within: Self.patience) { check.state.trusted ? true : nil }
        }
    }

    /// Polls `probe` until it answers, or fails the test after `limit`.
    private func waitFor<T>(within limit: Duration, _ probe: () throws -> T?) throws -> T {
        let deadline = ContinuousClock.now + limit
        while true {
            if let answer = try probe() { return answer }
            guard ContinuousClock.now < deadline else {
                Issue.record("nothing changed within \(limit)")
                throw CancellationError()
            }
            Thread.sleep(forTimeInterval: 0.001)
        }
    }
}
