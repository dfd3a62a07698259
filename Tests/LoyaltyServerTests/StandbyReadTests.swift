import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Testing

@testable import LoyaltyServer

/// Reads on a real streaming standby (`StreamingStandby`: pg_basebackup -R of a primary of its own), and each
/// way they go back to the primary: a standby older than the client's cursor, one that lags more than allowed, a
/// replica URL that reaches a primary, a standby that cannot be reached.
@Suite(.serialized) struct StandbyReadTests {
    private func server(maxLag: Double = 30) throws -> (TestServer, StreamingStandby) {
        let pair = try SharedStandby.started.get()
        // Without the catalog check in memory: these count the reads of its fallback, as a server that cannot listen
        // makes them (CatalogCheckTests covers the cache).
        let server = try TestServer(
            cluster: pair.primary, standby: { try pair.standby.conninfo(database: $0) }, standbyMaxLag: maxLag,
            deviceTokenCacheSize: 0)
        return (server, pair)
    }

    @Test func catalogPagesTheirRevalidationAndSeenSetsAreReadOnTheStandby() throws {
        let (server, pair) = try server()
        let matey = try server.registerRetailer()
        let offer = try server.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Sushi"))
        let shopper = try server.createAccount()
        try server.see(shopper, offer.id)
        try pair.waitForReplay()

        let full = try server.catalog(shopper)
        #expect(full.status == 200)
        let page = try full.decode(CatalogPage.self)
        #expect(page.offers.map(\.id) == [offer.id])
        #expect(try server.catalog(shopper, since: page.cursor, etag: full.headers["etag"]).status == 304)
        let seen = try server.request("GET", "/v1/seen", token: shopper.deviceToken)
        #expect(try seen.decode(SeenPage.self).items.map(\.offerID) == [offer.id])

        // Two reads for the page (the device and the feed's head, then the page), one for the 304, two for the
        // seen set (the device, then the set): all on the standby.
        #expect(try metric("loyalty_db_standby_reads_total", server) == 5)
        #expect(try primaryReads(server) == [0, 0, 0, 0])
        #expect(server.log.recorded.contains { $0.contains(#""event":"standby_reads","target":"standby""#) })
    }

    /// The standby stops replaying: a client whose cursor it has replayed gets its (older) answer; one whose
    /// cursor is newer (handed out by the primary, or by another server's standby) gets the primary's, never a
    /// 410 or an older page; a device the standby does not know yet is found on the primary, not refused.
    @Test func aStandbyOlderThanTheClientsCursorDefersToThePrimary() throws {
        let (server, pair) = try server()
        let matey = try server.registerRetailer()
        try server.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Sushi"))
        let shopper = try server.createAccount()
        try pair.waitForReplay()
        let before = try server.catalog(shopper).decode(CatalogPage.self).cursor

        try pair.pauseReplay()
        defer { try? pair.resumeReplay() }
        try server.putOffer(matey, major: 1, minor: 2, OfferDraft(title: "Pizza"))
        let newcomer = try server.createAccount()
        let head = try server.pool.withConnection { connection in
            let row = try connection.query("SELECT generation, version FROM catalog_feed WHERE singleton")[0]
            return FeedCursor(generation: try row.decode("generation"), version: try row.decode("version"))
        }

        let stale = try server.catalog(shopper, since: before)
        #expect(stale.status == 200)
        #expect(try stale.decode(CatalogPage.self).offers.isEmpty, "the standby's answer: it has not replayed Pizza")
        #expect(try server.catalog(shopper, since: head.encoded(), etag: head.entityTag).status == 304)
        let current = try server.catalog(shopper, since: head.encoded())
        #expect(current.status == 200, "\(current.text)")
        #expect(try current.decode(CatalogPage.self).cursor == head.encoded())
        let newcomersSeen = try server.request("GET", "/v1/seen", token: newcomer.deviceToken)
        #expect(newcomersSeen.status == 200, "\(newcomersSeen.text)")

        // Behind: the 304's head; the head and the page for the newer cursor; the newcomer's device and account.
        #expect(try primaryReads(server) == [1 + 2 + 2, 0, 0, 0])
    }

    /// A standby replaying more than DATABASE_REPLICA_MAX_LAG behind is passed over, said once in the log, and
    /// used again once it has caught up; /metrics shows its lag.
    @Test func aStandbyLaggingMoreThanAllowedIsPassedOverUntilItCatchesUp() throws {
        let (server, pair) = try server(maxLag: 1)
        let matey = try server.registerRetailer()
        try server.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Sushi"))
        let shopper = try server.createAccount()
        try pair.waitForReplay()
        #expect(try server.catalog(shopper).status == 200)
        #expect(try metric("loyalty_db_standby_reads_total", server) == 2)

        try pair.pauseReplay()
        try server.putOffer(matey, major: 1, minor: 2, OfferDraft(title: "Pizza"))
        Thread.sleep(forTimeInterval: 2)  // over the allowed second, and the last check's lifetime
        let lagging = try server.catalog(shopper)
        #expect(try lagging.decode(CatalogPage.self).offers.count == 2, "the primary's answer")
        #expect(try primaryReads(server) == [0, 2, 0, 0])
        #expect(try metric("loyalty_db_standby_lag_seconds", server, labelled: true) > 1)
        let warnings = server.log.recorded.filter { $0.contains(#""reason":"lagging""#) }
        #expect(warnings.count == 1 && warnings[0].contains("over the 1 s allowed"), "\(warnings)")

        try pair.resumeReplay()
        try pair.waitForReplay()
        Thread.sleep(forTimeInterval: 1.1)
        #expect(try server.catalog(shopper).status == 200)
        #expect(try metric("loyalty_db_standby_reads_total", server) == 4)
        #expect(server.log.recorded.last { $0.contains("standby_reads") }?.contains(#""target":"standby""#) == true)
    }

    /// DATABASE_REPLICA_URL naming the primary itself: not in recovery, so not used, and the log says so.
    @Test func aReplicaURLThatReachesAPrimaryIsNotUsed() throws {
        let server = try TestServer(standby: { try EmbeddedPostgres.shared().conninfo(database: $0) })
        let shopper = try server.createAccount()
        #expect(try server.catalog(shopper).status == 200)
        #expect(try metric("loyalty_db_standby_reads_total", server) == 0)
        #expect(try primaryReads(server) == [0, 0, 2, 0])
        let warnings = server.log.recorded.filter { $0.contains(#""reason":"not_standby""#) }
        #expect(warnings.count == 1 && warnings[0].contains("not in recovery"), "\(warnings)")
    }

    /// No standby answers (all gone): reads go to the primary at once, without trying the standby for each.
    @Test func readsFallBackToThePrimaryWhenNoStandbyAnswers() throws {
        let gone = "host=/nonexistent-standby port=5432 dbname=loyalty user=postgres"
        let server = try TestServer(standby: { _ in gone })
        let shopper = try server.createAccount()
        #expect(try server.catalog(shopper).status == 200)
        #expect(try server.request("GET", "/v1/seen", token: shopper.deviceToken).status == 200)
        #expect(try primaryReads(server) == [0, 0, 0, 4])
        let warnings = server.log.recorded.filter { $0.contains(#""reason":"unreachable""#) }
        #expect(warnings.count == 1, "\(warnings)")
    }

    /// A write that reaches a standby (a DATABASE_URL without target_session_attrs=read-write, or a primary
    /// being demoted) is "unavailable": 503 with Retry-After, as in any failover window, not a 500.
    @Test func aWriteThatReachesAStandbyAnswers503() throws {
        let pair = try SharedStandby.started.get()
        let standby = try PostgresConnection(conninfo: pair.standby.start())
        let error = try #require(throws: PostgresError.self) { try standby.query("CREATE TABLE written_on_standby ()") }
        #expect(error.kind == .unavailable && error.sqlState == PostgresError.SQLState.readOnlySQLTransaction)
        let answer = APIFailure.answering(error).failure
        #expect(answer.status == 503 && answer.headers["Retry-After"] == "2")
    }

    /// behind, lagging, not_standby, unreachable.
    private func primaryReads(_ server: TestServer) throws -> [Double] {
        try ["behind", "lagging", "not_standby", "unreachable"].map {
            try metric("loyalty_db_primary_reads_total{reason=\"\($0)\"}", server)
        }
    }

    /// A sample's value; `labelled`: the first sample of that name whatever its labels.
    private func metric(_ name: String, _ server: TestServer, labelled: Bool = false) throws -> Double {
        let text = try server.request("GET", "/metrics", token: server.operatorToken).text
        let line = try #require(
            text.split(separator: "\n").first { $0.hasPrefix(name + (labelled ? "{" : " ")) }, "\(name) missing")
        return try #require(Double(line.split(separator: " ").last ?? ""))
    }
}

/// The suite's primary and standby, started on first use; each test has a database of its own on them and
/// leaves replay running. Removed at exit.
private enum SharedStandby {
    static let started: Result<StreamingStandby, PostgresError> = {
        do throws(PostgresError) {
            let pair = try StreamingStandby()
            atexit { SharedStandby.remove() }
            return .success(pair)
        } catch {
            return .failure(error)
        }
    }()

    static func remove() {
        if case .success(let pair) = started { pair.remove() }
    }
}
