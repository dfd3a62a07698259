import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Synchronization
import Testing

@testable import LoyaltyServer

@Suite struct CatalogTests {
    @Test(arguments: Transport.allCases) func fullThenDeltaWithTombstonesAndETag(_ transport: Transport) throws {
        let server = try TestServer(transport)
        let retailer = try server.registerRetailer()
        let device = try server.createAccount()
        let sushi = try server.putOffer(retailer, major: 1, minor: 1, OfferDraft(title: "30% off sushi"))
        let pizza = try server.putOffer(retailer, major: 1, minor: 2, OfferDraft(title: "BOGOF pizza"))

        let fullReply = try server.catalog(device)
        #expect(fullReply.status == 200)
        let full: CatalogPage = try fullReply.decode()
        #expect(full.full)
        #expect(Set(full.offers.map(\.id)) == [sushi.id, pizza.id])
        #expect(full.retailers == [CatalogRetailer(id: retailer.id, name: retailer.name, uuid: retailer.uuid)])
        #expect(full.removed.isEmpty)
        #expect(full.serverTime == server.clock.read())
        let etag = try #require(fullReply.headers["etag"])

        let unchanged = try server.catalog(device, since: full.cursor, etag: etag)
        #expect(unchanged.status == 304)
        #expect(unchanged.body.isEmpty)

        let clothing = try server.putOffer(retailer, major: 2, minor: 1, OfferDraft(title: "50% off ladies' clothing"))
        #expect(try server.request("DELETE", "/v1/retailer/offers/1/1", token: retailer.apiKey).status == 204)

        let deltaReply = try server.catalog(device, since: full.cursor, etag: etag)
        #expect(deltaReply.status == 200)
        #expect(deltaReply.headers["etag"] != etag)
        let delta: CatalogPage = try deltaReply.decode()
        #expect(!delta.full)
        #expect(delta.offers.map(\.id) == [clothing.id])
        #expect(delta.removed == [CatalogTombstone(id: sushi.id, retailerID: retailer.id)])
        #expect(delta.retailers.isEmpty)

        let nothingNew: CatalogPage = try server.catalog(device, since: delta.cursor).decode()
        #expect(nothingNew.offers.isEmpty && nothingNew.removed.isEmpty && nothingNew.cursor == delta.cursor)

        let fullAgain: CatalogPage = try server.catalog(device).decode()
        #expect(Set(fullAgain.offers.map(\.id)) == [pizza.id, clothing.id])
        #expect(fullAgain.removed.isEmpty)
    }

    @Test func unservableCursorsAnswer410AndForeignOnes400() throws {
        let server = try TestServer()
        let other = try TestServer()
        let retailer = try server.registerRetailer()
        let device = try server.createAccount()
        try server.putOffer(retailer, major: 1, minor: 1, OfferDraft(title: "Gone soon"))
        let before: CatalogPage = try server.catalog(device).decode()

        let otherDevice = try other.createAccount()
        let fromOtherDatabase = try other.catalog(otherDevice, since: before.cursor)
        #expect(fromOtherDatabase.status == 410)
        #expect(fromOtherDatabase.errorCode == .cursorExpired)

        let garbage = try server.catalog(device, since: "not-a-cursor")
        #expect(garbage.status == 400)
        #expect(garbage.errorField == "since")

        // The tombstone is purged: a client that last synced before it can no longer get a correct delta.
        #expect(try server.request("DELETE", "/v1/retailer/offers/1/1", token: retailer.apiKey).status == 204)
        server.clock.advance(by: 60)
        try server.database.purgeTombstones(deletedBefore: server.clock.read())
        let tooOld = try server.catalog(device, since: before.cursor)
        #expect(tooOld.status == 410)
        #expect(tooOld.errorCode == .cursorExpired)
        #expect(try server.catalog(device).status == 200)
    }

    @Test func aRunningServerPurgesOldTombstones() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let device = try server.createAccount()
        try server.putOffer(retailer, major: 1, minor: 1, OfferDraft(title: "Gone long ago"))
        let recent = try server.putOffer(retailer, major: 1, minor: 2, OfferDraft(title: "Gone just now"))
        let before: CatalogPage = try server.catalog(device).decode()
        #expect(try server.request("DELETE", "/v1/retailer/offers/1/1", token: retailer.apiKey).status == 204)
        server.clock.advance(by: ScheduledPurge.tombstoneRetention + 1)
        #expect(try server.request("DELETE", "/v1/retailer/offers/1/2", token: retailer.apiKey).status == 204)

        // The first purge that deletes something logs; the wait is a bound on a failing test, not a timing.
        let log = LogRecorder()
        let purged = DispatchSemaphore(value: 0)
        let purge = ScheduledPurge(
            database: server.database, shopperDataRetention: 180 * 86_400, interval: 0.01,
            log: { line in
                log.record(line)
                purged.signal()
            })
        let ran = purged.wait(timeout: .now() + 60)
        purge.stop()
        try #require(ran == .success, "no purge deleted anything")

        let tombstones = try server.pool.withConnection { connection in
            try connection.query("SELECT id FROM offers WHERE deleted_at IS NOT NULL")
                .map { row throws(PostgresError) in try row.decode("id", as: UUID.self) }
        }
        #expect(tombstones == [recent.id])
        #expect(log.recorded.count == 1)
        let line = try #require(log.recorded.first)
        #expect(
            line.range(
                of: #"^\{"time":"[-0-9T:.]+Z","level":"info","event":"tombstones_purged","removed":1,"deleted_before":""#,
                options: .regularExpression) != nil, "\(line)")
        let tooOld = try server.catalog(device, since: before.cursor)
        #expect(tooOld.status == 410 && tooOld.errorCode == .cursorExpired)
    }

    @Test func purgesAtOnceDeleteEachTombstoneOnceAndNeverMoveTheHorizonBack() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        for minor in 1...6 {
            try server.putOffer(retailer, major: 1, minor: minor, OfferDraft(title: "offer \(minor)"))
            let removal = try server.request("DELETE", "/v1/retailer/offers/1/\(minor)", token: retailer.apiKey)
            #expect(removal.status == 204)
        }
        func purgedThrough() throws -> Int64 {
            try server.pool.withConnection { try $0.query("SELECT purged_through FROM catalog_feed")[0] }
                .decode("purged_through")
        }
        let lastVersion: Int64 = try server.pool.withConnection {
            try $0.query("SELECT max(version) AS version FROM offers")[0]
        }.decode("version")
        server.clock.advance(by: 60)

        let removed = Mutex<[Result<Int, any Error>]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let result = Result { try server.database.purgeTombstones(deletedBefore: server.clock.read()) }
            removed.withLock { $0.append(result) }
        }
        let counts = try removed.withLock { $0 }.map { try $0.get() }
        #expect(counts.reduce(0, +) == 6, "\(counts)")
        #expect(try purgedThrough() == lastVersion)

        // Instances' clocks differ: an offer removed by one whose clock is ahead has the earlier version and
        // the later time, so it is purged after a newer version was; the horizon stays where it was.
        try server.putOffer(retailer, major: 2, minor: 1, OfferDraft(title: "removed ahead"))
        try server.putOffer(retailer, major: 2, minor: 2, OfferDraft(title: "removed behind"))
        let now = server.clock.read()
        server.clock.advance(by: 100)
        #expect(try server.request("DELETE", "/v1/retailer/offers/2/1", token: retailer.apiKey).status == 204)
        server.clock.advance(by: -100)
        #expect(try server.request("DELETE", "/v1/retailer/offers/2/2", token: retailer.apiKey).status == 204)
        #expect(try server.database.purgeTombstones(deletedBefore: now.addingTimeInterval(50)) == 1)
        let newest = try purgedThrough()
        #expect(newest > lastVersion)
        #expect(try server.database.purgeTombstones(deletedBefore: now.addingTimeInterval(200)) == 1)
        #expect(try purgedThrough() == newest)
    }

    /// A client's copy of the catalog, built the way the pages say.
    private struct Copy: Equatable {
        var retailers: [UUID: CatalogRetailer] = [:]
        var offers: [UUID: Offer] = [:]
        var stores: [UUID: RetailStore] = [:]

        mutating func apply(_ page: CatalogPage) {
            if page.full { self = Copy() }
            for retailer in page.retailers { retailers[retailer.id] = retailer }
            for offer in page.offers { offers[offer.id] = offer }
            for tombstone in page.removed { offers[tombstone.id] = nil }
            for store in page.stores { stores[store.id] = store }
            for tombstone in page.removedStores { stores[tombstone.id] = nil }
        }
    }

    /// Small pages of a catalog that changes between them: each page holds at most `limit` rows and
    /// names the next in its Link header, and the pages applied in order give exactly the catalog
    /// of the last one, with the ETag of an up-to-date client.
    @Test(arguments: Transport.allCases)
    func pagesConcatenateToTheWholeCatalogWhileItChanges(_ transport: Transport) throws {
        let server = try TestServer(transport)
        let matey = try server.registerRetailer()
        let tucci = try server.registerRetailer("Tucci's")
        let device = try server.createAccount()
        for minor in 1...20 {
            try server.putOffer(minor % 3 == 0 ? tucci : matey, major: 1, minor: minor, OfferDraft(title: "Offer \(minor)"))
        }
        try server.putStore(matey, "carnaby", StoreDraft(name: "Carnaby", latitude: 51.5, longitude: -0.14, radiusMetres: 80))
        // Already deleted before the sync starts: a full page leaves it out.
        #expect(try server.request("DELETE", "/v1/retailer/offers/1/2", token: matey.apiKey).status == 204)

        var copy = Copy()
        var pages: [CatalogPage] = []
        var reply = try server.catalog(device, limit: 7)
        while true {
            #expect(reply.status == 200, "\(reply.text)")
            let page: CatalogPage = try reply.decode()
            #expect(page.full == pages.isEmpty)
            #expect(page.retailers.count + page.offers.count + page.removed.count + page.stores.count
                + page.removedStores.count <= 7)
            copy.apply(page)
            pages.append(page)
            guard page.more else {
                #expect(reply.headers["link"] == nil)
                break
            }
            #expect(reply.headers["link"] == "</v1/catalog?since=\(page.cursor)&limit=7>; rel=\"next\"")
            switch pages.count {
            case 1:
                // Offer 1 came in this page, offer 19 has not: change both, remove one of each kind.
                #expect(page.offers.contains { $0.title == "Offer 1" })
                #expect(!page.offers.contains { $0.title == "Offer 19" })
                try server.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Offer 1, changed"))
                try server.putOffer(matey, major: 1, minor: 19, OfferDraft(title: "Offer 19, changed"))
                #expect(try server.request("DELETE", "/v1/retailer/offers/1/4", token: matey.apiKey).status == 204)
                #expect(try server.request("DELETE", "/v1/retailer/offers/1/20", token: matey.apiKey).status == 204)
            case 2:
                try server.putOffer(tucci, major: 2, minor: 1, OfferDraft(title: "Added during the sync"))
                #expect(try server.request("DELETE", "/v1/retailer/stores/carnaby", token: matey.apiKey).status == 204)
                try server.putStore(tucci, "rivoli", StoreDraft(name: "Rivoli", latitude: 48.86, longitude: 2.34, radiusMetres: 50))
            default:
                break
            }
            reply = try server.catalog(device, since: page.cursor, limit: 7)
        }
        #expect(pages.count >= 4)

        let wholeReply = try server.catalog(device)
        let whole: CatalogPage = try wholeReply.decode()
        #expect(!whole.more)
        var expected = Copy()
        expected.apply(whole)
        #expect(copy == expected)
        #expect(expected.offers.values.map(\.title).sorted().contains("Offer 1, changed"))
        #expect(expected.offers.count == 18)
        #expect(expected.stores.values.map(\.storeID) == ["rivoli"])
        #expect(pages.last?.cursor == whole.cursor)
        #expect(try server.catalog(device, since: whole.cursor, etag: wholeReply.headers["etag"]).status == 304)
    }

    @Test func pageLimitsOutsideOneToTenThousandAnswer422() throws {
        let server = try TestServer()
        let device = try server.createAccount()
        for limit in ["0", "10001", "-1", "ten"] {
            let reply = try server.request("GET", "/v1/catalog?limit=\(limit)", token: device.deviceToken)
            #expect(reply.status == 422, "limit=\(limit)")
            #expect(reply.errorField == "limit")
        }
        #expect(try server.catalog(device, limit: 10_000).status == 200)
    }

    /// The 304 path authenticates in the same statement that reads the feed: a revoked or unknown
    /// device token, or another kind of credential, still gets no catalog.
    @Test func catalogRefusesTokensThatAreNotLiveDevices() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let device = try server.createAccount()
        let etag = try #require(try server.catalog(device).headers["etag"])
        let headers = ["If-None-Match": etag]
        #expect(try server.request("GET", "/v1/catalog", token: device.deviceToken, headers: headers).status == 304)
        #expect(try server.request("GET", "/v1/catalog", token: "ld_unknown", headers: headers).status == 401)
        #expect(try server.request("GET", "/v1/catalog", headers: headers).status == 401)
        #expect(try server.request("GET", "/v1/catalog", token: retailer.apiKey, headers: headers).status == 403)
        let revoke = try server.request(
            "DELETE", "/v1/devices/\(device.deviceID.uuidString.lowercased())", token: device.deviceToken)
        #expect(revoke.status == 204)
        #expect(try server.request("GET", "/v1/catalog", token: device.deviceToken, headers: headers).status == 401)
    }

    /// If-None-Match as RFC 9110 has it: a list of tags with optional whitespace, a weak form, or `*`.
    @Test func ifNoneMatchTakesListsWeakTagsAndAStar() throws {
        let server = try TestServer()
        let device = try server.createAccount()
        // Weak: two pages with the same tag differ in server_time. The tags below are its opaque part.
        let weakTag = try #require(try server.catalog(device).headers["etag"])
        #expect(weakTag.hasPrefix("W/\""))
        let etag = String(weakTag.dropFirst(2))
        let status = { (value: String) in
            try server.request("GET", "/v1/catalog", token: device.deviceToken, headers: ["If-None-Match": value])
                .status
        }
        let matchingValues = [
            "\"other\", \(etag)", "\(etag),\"other\"", " \t\(etag) ", "W/\(etag)", "\"a\" , W/\(etag)", "*",
        ]
        for value in matchingValues {
            #expect(try status(value) == 304, "\(value)")
        }
        for value in ["\"other\"", "\(etag.dropLast())", "W/\"other\", \(etag)x", "w/\(etag)", ",,", ""] {
            #expect(try status(value) == 200, "\(value)")
        }
    }

    /// T1 writes offer A and stays open; T2 writes B. The feed must never hand out a cursor past A
    /// before A is visible: here T2 waits for T1 (the feed row lock), and the next delta after T1
    /// commits carries A.
    @Test func feedDoesNotSkipARowCommittedLate() throws {
        let server = try TestServer()
        let retailer = try server.registerRetailer()
        let device = try server.createAccount()
        let start: CatalogPage = try server.catalog(device).decode()

        let first = try PostgresConnection(conninfo: server.conninfo)
        try first.query("BEGIN")
        try first.query(
            """
            INSERT INTO offers (retailer_id, major, minor, title, updated_at)
            VALUES (\(retailer.id), 1, 1, 'A', now())
            """)

        let secondFinished = Atomic<Bool>(false)
        let secondError = Mutex<String?>(nil)
        let secondDone = DispatchSemaphore(value: 0)
        let conninfo = server.conninfo
        let retailerID = retailer.id
        Thread {
            do {
                let second = try PostgresConnection(conninfo: conninfo)
                try second.query(
                    """
                    INSERT INTO offers (retailer_id, major, minor, title, updated_at)
                    VALUES (\(retailerID), 1, 2, 'B', now())
                    """)
            } catch {
                secondError.withLock { $0 = "\(error)" }
            }
            secondFinished.store(true, ordering: .sequentiallyConsistent)
            secondDone.signal()
        }.start()
        let blocked = try server.waitForALockWait { secondFinished.load(ordering: .sequentiallyConsistent) }
        #expect(blocked, "B did not wait for A's lock")
        let committedWhileAWasOpen = secondFinished.load(ordering: .sequentiallyConsistent)
        #expect(!committedWhileAWasOpen, "B committed while A was open")

        let middle: CatalogPage = try server.catalog(device, since: start.cursor).decode()
        #expect(middle.offers.isEmpty)

        try first.query("COMMIT")
        #expect(secondDone.wait(timeout: .now() + 10) == .success)
        #expect(secondError.withLock { $0 } == nil)

        let after: CatalogPage = try server.catalog(device, since: middle.cursor).decode()
        #expect(after.offers.map(\.title) == ["A", "B"])
    }
}
