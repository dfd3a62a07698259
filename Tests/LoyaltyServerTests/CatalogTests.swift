import Foundation
import LoyaltyAPI
import Postgres
import Synchronization
import Testing

@testable import LoyaltyServer

@Suite struct CatalogTests {
    @Test func fullThenDeltaWithTombstonesAndETag() throws {
        let server = try TestServer()
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
        try server.store.purgeTombstones(deletedBefore: server.clock.read())
        let tooOld = try server.catalog(device, since: before.cursor)
        #expect(tooOld.status == 410)
        #expect(tooOld.errorCode == .cursorExpired)
        #expect(try server.catalog(device).status == 200)
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
        Thread.sleep(forTimeInterval: 0.5)
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
