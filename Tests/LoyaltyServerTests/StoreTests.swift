import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyServer

extension TestServer {
    @discardableResult
    func putStore(_ retailer: RetailerCredentials, _ storeID: String, _ draft: StoreDraft) throws
        -> RetailStore
    {
        let reply = try request(
            "PUT", "/v1/retailer/stores/\(storeID)", token: retailer.apiKey, json: draft)
        try #require(reply.status == 201 || reply.status == 200, "\(reply.text)")
        return try reply.decode()
    }

    func stores(_ retailer: RetailerCredentials) throws -> [RetailStore] {
        let reply = try request("GET", "/v1/retailer/stores", token: retailer.apiKey)
        try #require(reply.status == 200, "\(reply.text)")
        return try reply.decode(StoreList.self).stores
    }
}

private let carnaby = StoreDraft(
    name: "Carnaby Street", latitude: 51.5136, longitude: -0.1365, radiusMetres: 80)
private let rivoli = StoreDraft(
    name: "Rue de Rivoli", latitude: 48.8606, longitude: 2.3376, radiusMetres: 120)
/// Suva, Fiji: just west of the 180th meridian; Taveuni's shop just east of it.
private let suva = StoreDraft(name: "Suva", latitude: -16.5, longitude: 179.99, radiusMetres: 100)
private let taveuni = StoreDraft(
    name: "Taveuni", latitude: -16.5, longitude: -179.99, radiusMetres: 100)

@Suite struct StoreTests {
    @Test(arguments: Transport.allCases) func createReplaceListAndRemove(_ transport: Transport) throws {
        let server = try TestServer(transport)
        let matey = try server.registerRetailer()
        let created = try server.request(
            "PUT", "/v1/retailer/stores/carnaby", token: matey.apiKey, json: carnaby)
        #expect(created.status == 201)
        let store: RetailStore = try created.decode()
        #expect(store.storeID == "carnaby" && store.retailerID == matey.id && store.radiusMetres == 80)
        #expect(store.latitude == 51.5136 && store.longitude == -0.1365)

        var moved = carnaby
        moved.radiusMetres = 150
        let replaced = try server.request(
            "PUT", "/v1/retailer/stores/carnaby", token: matey.apiKey, json: moved)
        #expect(replaced.status == 200)
        #expect(try replaced.decode(RetailStore.self).id == store.id)
        try server.putStore(matey, "rivoli", rivoli)
        #expect(try server.stores(matey).map(\.storeID) == ["carnaby", "rivoli"])
        #expect(try server.stores(matey).first?.radiusMetres == 150)

        #expect(
            try server.request("DELETE", "/v1/retailer/stores/carnaby", token: matey.apiKey).status == 204
        )
        let again = try server.request("DELETE", "/v1/retailer/stores/carnaby", token: matey.apiKey)
        #expect(again.status == 404 && again.errorCode == .notFound)
        #expect(try server.stores(matey).map(\.storeID) == ["rivoli"])
        // The id is free again: a new store, a new row.
        #expect(try server.putStore(matey, "carnaby", carnaby).id != store.id)
    }

    @Test func invalidStoresAre422NamingTheField() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let cases: [(String, String, String)] = [
            ("carnaby", #"{"name":"A","latitude":51.5,"longitude":-0.1,"radius_m":9}"#, "radius_m"),
            ("carnaby", #"{"name":"A","latitude":51.5,"longitude":-0.1,"radius_m":10001}"#, "radius_m"),
            ("carnaby", #"{"name":"A","latitude":90.5,"longitude":-0.1,"radius_m":100}"#, "latitude"),
            ("carnaby", #"{"name":"A","latitude":-91,"longitude":-0.1,"radius_m":100}"#, "latitude"),
            ("carnaby", #"{"name":"A","latitude":51.5,"longitude":180.01,"radius_m":100}"#, "longitude"),
            ("carnaby", #"{"name":"A","latitude":51.5,"longitude":-181,"radius_m":100}"#, "longitude"),
            ("carnaby", #"{"name":"","latitude":51.5,"longitude":-0.1,"radius_m":100}"#, "name"),
            ("carnaby", #"{"name":"A","longitude":-0.1,"radius_m":100}"#, "latitude"),
            (
                "carnaby", #"{"name":"A","latitude":51.5,"longitude":-0.1,"radius_m":100,"colour":"red"}"#,
                "colour"
            ),
            ("car%20naby", #"{"name":"A","latitude":51.5,"longitude":-0.1,"radius_m":100}"#, "store_id"),
            (
                String(repeating: "x", count: 65),
                #"{"name":"A","latitude":51.5,"longitude":-0.1,"radius_m":100}"#, "store_id"
            ),
        ]
        for (storeID, body, field) in cases {
            let reply = try server.request(
                "PUT", "/v1/retailer/stores/\(storeID)", token: matey.apiKey, rawJSON: body)
            #expect(reply.status == 422, "\(body): \(reply.text)")
            #expect(reply.errorField == field, "\(body): \(reply.text)")
        }
        // Bounds themselves are valid.
        try server.putStore(
            matey, "edge", StoreDraft(name: "Edge", latitude: -90, longitude: 180, radiusMetres: 10))
        try server.putStore(
            matey, "edge", StoreDraft(name: "Edge", latitude: 90, longitude: -180, radiusMetres: 10_000))
        let wrongType = try server.request(
            "PUT", "/v1/retailer/stores/x", token: matey.apiKey,
            rawJSON: #"{"name":"A","latitude":"north","longitude":0,"radius_m":100}"#)
        #expect(wrongType.status == 400 && wrongType.errorField == "latitude")
        let device = try server.createAccount()
        #expect(
            try server.request("GET", "/v1/retailer/stores", token: device.deviceToken).status == 403)
        #expect(try server.request("GET", "/v1/retailer/stores").status == 401)
    }

    @Test func retailersSeeAndChangeOnlyTheirOwnStores() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer("Matey's")
        let rival = try server.registerRetailer("Rival")
        let mine = try server.putStore(matey, "carnaby", carnaby)
        #expect(try server.stores(rival).isEmpty)
        let foreignDelete = try server.request(
            "DELETE", "/v1/retailer/stores/carnaby", token: rival.apiKey)
        #expect(foreignDelete.status == 404)
        // The same store id is the rival's own store, not a replacement of Matey's.
        let theirs = try server.putStore(rival, "carnaby", rivoli)
        #expect(theirs.id != mine.id && theirs.retailerID == rival.id)
        #expect(try server.stores(matey) == [mine])
        #expect(try server.stores(rival) == [theirs])
    }

    @Test func storesTravelInTheFeedWithTombstones() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let device = try server.createAccount()
        let store = try server.putStore(matey, "carnaby", carnaby)
        let full: CatalogPage = try server.catalog(device).decode()
        #expect(full.stores == [store] && full.removedStores.isEmpty)

        var bigger = carnaby
        bigger.radiusMetres = 200
        let moved = try server.putStore(matey, "carnaby", bigger)
        let paris = try server.putStore(matey, "rivoli", rivoli)
        let delta: CatalogPage = try server.catalog(device, since: full.cursor).decode()
        #expect(!delta.full)
        #expect(delta.stores == [moved, paris])
        #expect(delta.removedStores.isEmpty && delta.offers.isEmpty)

        #expect(
            try server.request("DELETE", "/v1/retailer/stores/rivoli", token: matey.apiKey).status == 204)
        let removal: CatalogPage = try server.catalog(device, since: delta.cursor).decode()
        #expect(removal.stores.isEmpty)
        #expect(removal.removedStores == [CatalogTombstone(id: paris.id, retailerID: matey.id)])
        let fullAgain: CatalogPage = try server.catalog(device).decode()
        #expect(fullAgain.stores == [moved] && fullAgain.removedStores.isEmpty)

        // Purged store tombstones make older cursors unservable, as offers' do.
        server.clock.advance(by: 60)
        try server.database.purgeTombstones(deletedBefore: server.clock.read())
        #expect(try server.catalog(device, since: delta.cursor).status == 410)
    }

    @Test func nearbyCatalogHoldsOnlyRetailersWithAStoreInTheArea() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer("Matey's")
        let parisian = try server.registerRetailer("Parisian")
        let fijian = try server.registerRetailer("Fijian")
        let storeless = try server.registerRetailer("Online only")
        let sushi = try server.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "30% off sushi"))
        try server.putOffer(parisian, major: 1, minor: 1, OfferDraft(title: "Croissant"))
        try server.putOffer(storeless, major: 1, minor: 1, OfferDraft(title: "Free shipping"))
        let london = try server.putStore(matey, "carnaby", carnaby)
        try server.putStore(matey, "rivoli", rivoli)  // Matey's has a Paris store too
        try server.putStore(parisian, "rivoli", rivoli)
        let taveuniStore = try server.putStore(fijian, "taveuni", taveuni)
        let device = try server.createAccount()

        func near(_ query: String, etag: String? = nil) throws -> TestResponse {
            try server.request(
                "GET", "/v1/catalog?\(query)", token: device.deviceToken,
                headers: etag.map { ["If-None-Match": $0] } ?? [:])
        }
        // Oxford Circus is about 500 m from the Carnaby Street store.
        let londonReply = try near("near=51.5152,-0.1418&radius_km=1")
        #expect(londonReply.status == 200, "\(londonReply.text)")
        let londonPage: CatalogPage = try londonReply.decode()
        #expect(londonPage.full)
        #expect(londonPage.retailers.map(\.name) == ["Matey's"])
        #expect(londonPage.offers.map(\.id) == [sushi.id])
        #expect(londonPage.stores == [london])

        // 0.4 km: the store is about 0.5 km away, so nothing.
        let tooSmall: CatalogPage = try near("near=51.5152,-0.1418&radius_km=0.4").decode()
        #expect(tooSmall.retailers.isEmpty && tooSmall.offers.isEmpty && tooSmall.stores.isEmpty)

        // London to Paris is about 344 km.
        let wide: CatalogPage = try near("near=51.5152,-0.1418&radius_km=350").decode()
        #expect(Set(wide.retailers.map(\.name)) == ["Matey's", "Parisian"])
        #expect(wide.offers.count == 2 && wide.stores.count == 3)

        // Across the 180th meridian: Suva's side finds the store on Taveuni's side (about 2.1 km).
        let pacific: CatalogPage = try near("near=-16.5,179.99&radius_km=3").decode()
        #expect(pacific.retailers.map(\.name) == ["Fijian"] && pacific.stores == [taveuniStore])

        // Defaults to 10 km.
        let defaultRadius: CatalogPage = try near("near=51.5,-0.12").decode()
        #expect(defaultRadius.retailers.map(\.name) == ["Matey's"])

        // ETag per area: 304 for the same area while nothing changed, 200 for another area.
        let etag = try #require(londonReply.headers["etag"])
        #expect(
            try near("near=51.5152,-0.1418&radius_km=1&since=\(londonPage.cursor)", etag: etag).status
                == 304)
        #expect(try near("near=48.8606,2.3376&radius_km=1", etag: etag).status == 200)
        try server.putOffer(matey, major: 1, minor: 2, OfferDraft(title: "Pizza"))
        let changed = try near(
            "near=51.5152,-0.1418&radius_km=1&since=\(londonPage.cursor)", etag: etag)
        let changedPage: CatalogPage = try changed.decode()
        #expect(changed.status == 200 && changedPage.offers.count == 2)

        // A near cursor is no cursor of the whole feed.
        let misuse = try server.catalog(device, since: londonPage.cursor)
        #expect(misuse.status == 400 && misuse.errorField == "since")
        for (query, field) in [
            ("near=91,0", "near"), ("near=0,181", "near"), ("near=abc", "near"), ("near=1,2,3", "near"),
            ("near=0,0&radius_km=0", "radius_km"), ("near=0,0&radius_km=20001", "radius_km"),
            ("near=0,0&radius_km=nan", "radius_km"), ("radius_km=5", "radius_km"),
        ] {
            let reply = try near(query)
            #expect(reply.status == 422 && reply.errorField == field, "\(query): \(reply.text)")
        }
    }
}
