import Foundation
import LoyaltyTesting
import SQLite
import Testing

/// The working set as `loyalty sync`'s default, through the real binaries, each story on a `loyalty-server` of its
/// own: how many retailers it has decides the directory's buckets, and so what a plain sync carries.
@Suite struct DefaultScopeStoryTests {
    /// Registers `count` retailers; those of `shops` (the first ones) get a store at their point, 0.1 degree apart
    /// going north from `origin`, and an offer at 1:1 titled after them.
    private func retailers(
        _ server: StoryServer, count: Int, shops: Int, origin: (latitude: Double, longitude: Double) = (10, 10)
    ) throws -> [(uuid: String, title: String, latitude: Double, longitude: Double)] {
        var made: [(uuid: String, title: String, latitude: Double, longitude: Double)] = []
        for index in 0..<count {
            let name = "Shop \(index)"
            let uuid = UUID().uuidString
            let retailer = try server.retailer(name, uuid: uuid)
            guard index < shops else { continue }
            let point = (latitude: origin.latitude + Double(index) / 10, longitude: origin.longitude)
            try retailer.setOffer(1, 1, "Deal at \(name)", [])
            try retailer.ok([
                "retailer", "store", "set", "main", "--name", "\(name) main", "--lat", "\(point.latitude)",
                "--lon", "\(point.longitude)", "--radius-m", "100",
            ])
            made.append((uuid, "Deal at \(name)", point.latitude, point.longitude))
        }
        return made
    }

    private func near(_ shop: (uuid: String, title: String, latitude: Double, longitude: Double)) -> [String] {
        ["--near", "\(shop.latitude),\(shop.longitude)", "--radius-km", "2"]
    }

    /// 32 retailers make two buckets: a new device's plain sync carries the directory and nothing else (no page of
    /// offers), `--near` its home area's retailer; `--all` is kept by the next plain syncs and scans' syncs until
    /// `--working-set`, which returns to the home area.
    @Test func aPlainSyncOfANewDeviceCarriesTheDirectoryAndItsWorkingSet() throws {
        let server = try StoryServer()
        defer { server.stop() }
        let shops = try retailers(server, count: 32, shops: 3)
        let device = try server.newAccount()

        let first = try device.syncReport()
        #expect(first["directory_retailers"] as? Int == 32)
        #expect(first["carried_retailers"] as? Int == 0)
        #expect(first["cached_offers"] as? Int == 0 && first["catalog_pages"] as? Int == 0, "\(first)")
        #expect(first["catalog_changed"] as? Bool == true, "the directory came")
        #expect(try device.cachedTitles().isEmpty)
        let none = try device.ok(["offers"]).stdout
        #expect(none.contains("working set carries no retailer yet") && none.contains("loyalty follow NAME"), "\(none)")
        let text = try device.ok(["sync"]).stdout
        #expect(text.contains("catalog unchanged") && text.contains("carrying 0 of 32 retailers' offers"), "\(text)")

        let home = try device.ok(["sync", "--json"] + near(shops[0])).jsonLines.first { $0["event"] as? String == "synced" }
        #expect(home?["carried_retailers"] as? Int == 1 && home?["catalog_pages"] as? Int == 1, "\(home ?? [:])")
        #expect(try device.cachedTitles() == [shops[0].title])

        // The whole catalog, kept: a plain sync and a scan's sync stay with it.
        let all = try device.ok(["sync", "--all", "--json"]).jsonLines.first { $0["event"] as? String == "synced" }
        #expect(all?["carried_retailers"] == nil && all?["cached_offers"] as? Int == 3, "\(all ?? [:])")
        let plain = try device.syncReport()
        #expect(plain["carried_retailers"] == nil && plain["cached_offers"] as? Int == 3, "\(plain)")
        let walk = try server.walk(["\(shops[2].uuid):1:1@0=15,8=1,16=1,24=15,40=15"])
        #expect(try device.scan(walk).map(\.title) == [shops[2].title])
        #expect(Set(try device.cachedTitles()) == Set(shops.map(\.title)))
        let refetched = try device.ok(["sync", "--full", "--all", "--json"]).jsonLines.first {
            $0["event"] as? String == "synced"
        }
        #expect(refetched?["full"] as? Bool == true && refetched?["offers_received"] as? Int == 3, "\(refetched ?? [:])")

        // Back to the working set: the home area's retailer only (the offer the scan showed was sent: nothing waits).
        let back = try device.ok(["sync", "--working-set", "--json"]).jsonLines.first { $0["event"] as? String == "synced" }
        #expect(back?["carried_retailers"] as? Int == 1, "\(back ?? [:])")
        #expect(try device.cachedTitles() == [shops[0].title])
    }

    /// Under 32 retailers the directory has one bucket: a new device's plain sync fetches it in one page and carries
    /// every offer, so an offline scan shows any retailer's.
    @Test func aSingleBucketDeploymentsPlainSyncCarriesEveryOffer() throws {
        let server = try StoryServer()
        defer { server.stop() }
        let shops = try retailers(server, count: 3, shops: 3)
        let device = try server.newAccount()
        let first = try device.syncReport()
        #expect(first["directory_retailers"] as? Int == 3 && first["carried_retailers"] as? Int == 3, "\(first)")
        #expect(first["cached_offers"] as? Int == 3 && first["catalog_pages"] as? Int == 1, "\(first)")
        #expect(Set(try device.cachedTitles()) == Set(shops.map(\.title)))
        let walk = try server.walk(["\(shops[1].uuid):1:1@0=15,8=1,16=1,24=15,40=15"])
        #expect(try device.scan(walk, ["--offline"]).map(\.title) == [shops[1].title])
        #expect(try device.syncReport()["catalog_pages"] as? Int == 0, "an unchanged catalog costs no page")
    }

    /// A cache that carries the whole catalog from before the working set was the default (no scope stored) turns
    /// to a working set at the next plain sync: the offer redeemed and not yet used at a till stays, with its
    /// redemption and the seen history; the other retailers' offers go.
    @Test func aWholeCatalogCacheFromBeforeMovesToTheWorkingSetKeepingWhatWaits() throws {
        let server = try StoryServer()
        defer { server.stop() }
        let shops = try retailers(server, count: 32, shops: 3)
        let device = try server.newAccount()
        try device.ok(["sync", "--all"])
        try device.visit(shops[1].uuid, minors: [1])
        let redeemed = try device.ok(["redeem", "\(shops[1].uuid):1:1", "--json"]).jsonLines
        #expect((redeemed.first?["code"] as? String)?.isEmpty == false, "\(redeemed)")
        try forgetScope(device)
        #expect(Set(try device.cachedTitles()) == Set(shops.map(\.title)))

        let moved = try device.syncReport()
        #expect(moved["carried_retailers"] as? Int == 0 && moved["directory_retailers"] as? Int == 32, "\(moved)")
        #expect(try device.cachedTitles() == [shops[1].title])
        let history = try device.ok(["history", "--json"]).jsonLines
        #expect(history.contains { $0["event"] as? String == "seen" && $0["title"] as? String == shops[1].title })
        #expect(
            history.contains { $0["event"] as? String == "redeemed" && $0["title"] as? String == shops[1].title },
            "\(history)")
    }

    /// Makes the device's cache one from before the catalog had a scope: what an older `loyalty` left.
    private func forgetScope(_ device: StoryDevice) throws {
        let cache = try SQLiteDatabase(path: device.home.appendingPathComponent("cache.sqlite").path)
        #expect(try cache.run("DELETE FROM sync_state WHERE key = 'catalog_scope'") == 1)
    }
}
