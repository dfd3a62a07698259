import Foundation
import LoyaltyTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The shopper's and the retailer's stories through the real binaries: one `loyalty-server` on its own
/// embedded PostgreSQL, shared by the suite, and `loyalty` devices, each with its own LOYALTY_HOME.
@Suite struct ShopperStoryTests {
    static let matey = "8F0C1DDC-11E5-4A07-8910-425941B072F9"

    @Test func mateysDemoStory() throws {
        let server = try StoryServer.shared.get()
        let store = try server.retailer("Matey's", uuid: Self.matey)
        try store.setOffer(1, 1, "30% off sushi at The Japanese Kitchen", ["--category", "food"])
        try store.setOffer(1, 2, "Buy one get one free at Tucci's Pizza", ["--category", "food"])
        try store.setOffer(2, 1, "50% off all ladies' clothing", ["--category", "clothing"])
        let phone = try server.newAccount()
        let tablet = try phone.linkedDevice()
        let walk = try server.walk([
            "\(Self.matey):1:1@0=15,8=1,16=1,24=15,70=15",
            "\(Self.matey):1:2@0=20,24=20,32=1.2,40=1.2,48=20,70=20",
            "\(Self.matey):2:1@0=25,48=25,56=0.8,64=0.8,70=25",
        ])

        try phone.ok(["sync"])
        let shown = try phone.scan(walk)
        #expect(
            shown.map(\.title) == [
                "30% off sushi at The Japanese Kitchen", "Buy one get one free at Tucci's Pizza",
                "50% off all ladies' clothing",
            ])
        // One at a time: each offer is shown for the dwell (5 s of capture time) before the next.
        for (earlier, later) in zip(shown, shown.dropFirst()) {
            #expect(later.time - earlier.time >= 5)
        }

        let redeemed = try phone.ok(["redeem", "\(Self.matey):1:1", "--json"]).jsonLines
        #expect((redeemed.first?["code"] as? String)?.isEmpty == false)

        try phone.ok(["sync"])
        try tablet.ok(["sync"])
        #expect(try tablet.scan(walk).isEmpty)
        let stats = try store.statistics()
        #expect(stats.map(\.seenBy) == [1, 1, 1])
        #expect(stats.map(\.redemptions) == [1, 0, 0])
    }

    @Test func offerOutsideItsValidityWindowIsNotShown() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Window shop", uuid: uuid)
        try store.setOffer(
            1, 1, "Ended long ago",
            ["--starts", "2000-01-01T00:00:00Z", "--ends", "2000-01-02T00:00:00Z"])
        try store.setOffer(1, 2, "Not started yet", ["--starts", "2999-01-01T00:00:00Z"])
        try store.setOffer(1, 3, "Running now", [])
        let shopper = try server.newAccount()
        try shopper.ok(["sync"])
        let walk = try server.walk([
            "\(uuid):1:1@0=1,30=1", "\(uuid):1:2@0=1,30=1", "\(uuid):1:3@0=1,30=1",
        ])
        #expect(try shopper.scan(walk).map(\.title) == ["Running now"])
    }

    @Test func reshowAfterShowsTheOfferAgain() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Bakery", uuid: uuid)
        try store.setOffer(1, 1, "Fresh bread", ["--reshow-after", "20"])
        try store.setOffer(1, 2, "Once only", [])
        let shopper = try server.newAccount()
        try shopper.ok(["sync"])
        // Near both at 0-10 s and again at 40-50 s; away in between.
        let passes = "@0=1,10=1,12=20,38=20,40=1,50=1,60=20"
        let shown = try shopper.scan(try server.walk(["\(uuid):1:1\(passes)", "\(uuid):1:2\(passes)"]))
        #expect(shown.filter { $0.title == "Fresh bread" }.count == 2)
        #expect(shown.filter { $0.title == "Once only" }.count == 1)
    }

    @Test func removedOfferDisappearsAfterSync() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Closing down", uuid: uuid)
        try store.setOffer(3, 7, "Everything must go", [])
        let shopper = try server.newAccount()
        try shopper.ok(["sync", "--all"])  // The whole catalog: the shared server has two buckets.
        #expect(try shopper.cachedTitles().contains("Everything must go"))

        try store.ok(["retailer", "offer", "rm", "3", "7"])
        try shopper.ok(["sync"])
        #expect(!(try shopper.cachedTitles().contains("Everything must go")))
        #expect(try shopper.scan(try server.walk(["\(uuid):3:7@0=1,20=1"])).isEmpty)
    }

    @Test func twoDevicesSeeingOneOfferRecordOneSeenEntry() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Busy shop", uuid: uuid)
        try store.setOffer(1, 1, "Two for one", [])
        let phone = try server.newAccount()
        let tablet = try phone.linkedDevice()
        try phone.ok(["sync", "--all"])  // The scans are offline: the whole catalog, not a working set.
        try tablet.ok(["sync", "--all"])
        // Both are shown the offer before either tells the server.
        let walk = try server.walk(["\(uuid):1:1@0=1,20=1"])
        #expect(try phone.scan(walk, ["--offline"]).count == 1)
        #expect(try tablet.scan(walk, ["--offline"]).count == 1)
        #expect(try phone.syncReport()["pushed"] as? Int == 1)
        #expect(try tablet.syncReport()["pushed"] as? Int == 1)
        try phone.ok(["sync"])

        #expect(try store.statistics().map(\.seenBy) == [1])
        for device in [phone, tablet] {
            let seen = try device.ok(["history", "--json"]).jsonLines.filter {
                $0["event"] as? String == "seen"
            }
            #expect(seen.map { $0["title"] as? String } == ["Two for one"])
        }
    }

    @Test func outboxSurvivesAKilledScan() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Night market", uuid: uuid)
        try store.setOffer(5, 5, "Late deal", [])
        let shopper = try server.newAccount()
        try shopper.ok(["sync", "--all"])  // The scan is offline: the whole catalog, not a working set.
        // Paced by the capture's clock, so the scan is still running when it is killed.
        let walk = try server.walk(["\(uuid):5:5@0=1,120=1"])
        try shopper.killScanAfterFirstOffer(walk)

        #expect(try shopper.syncReport()["pushed"] as? Int == 1)
        #expect(try shopper.syncReport()["pushed"] as? Int == 0)
        #expect(try store.statistics().map(\.seenBy) == [1])
    }

    @Test func revokedDeviceIsRefusedWithExit77() throws {
        let server = try StoryServer.shared.get()
        let phone = try server.newAccount()
        let tablet = try phone.linkedDevice()
        let devices = try phone.ok(["devices", "--json"]).jsonLines
        let tabletID = try #require(devices.first { $0["current"] as? Bool == false }?["id"] as? String)
        try phone.ok(["devices", "revoke", tabletID])

        let refused = try tablet.run(["sync"])
        #expect(refused.status == 77)
        #expect(refused.stderr.lowercased().contains("revoked"))
        try phone.ok(["sync"])
    }
}
