import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyServer

@Suite struct NearPageTests {
    /// An area's catalog once came whole, whatever its retailers published: a rival's few imports near a store
    /// made every shopper's `sync --near` there fail. Now it comes in pages of `limit` rows as the whole feed
    /// does: the area's retailers first, then its stores, then its offers, each row once; a page with more after
    /// it is no 304 for a client that stopped there, and the last page's tag is.
    @Test func anAreaWhoseRetailersPublishALotComesInPages() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer("Matey's")
        let rival = try server.registerRetailer("Rival")
        let far = try server.registerRetailer("Far away")
        try server.putStore(matey, "carnaby", StoreDraft(name: "Carnaby", latitude: 51.5136, longitude: -0.1365, radiusMetres: 80))
        try server.putStore(rival, "next-door", StoreDraft(name: "Next door", latitude: 51.5137, longitude: -0.1366, radiusMetres: 80))
        try server.putStore(rival, "second", StoreDraft(name: "Second", latitude: 51.5138, longitude: -0.1367, radiusMetres: 80))
        try server.putStore(far, "paris", StoreDraft(name: "Paris", latitude: 48.8606, longitude: 2.3376, radiusMetres: 80))
        let sushi = try server.putOffer(matey, major: 1, minor: 1, OfferDraft(title: "Sushi"))
        let csv = "major,minor,title\n" + (0..<2_500).map { "\($0 / 1000 + 1),\($0 % 1000),Long offer \($0)" }
            .joined(separator: "\n")
        #expect(try server.importOffers(rival, csv).status == 200)
        try server.putOffer(far, major: 1, minor: 1, OfferDraft(title: "Elsewhere"))
        let device = try server.createAccount()
        let area = "near=51.5136,-0.1365&radius_km=1"

        var pages: [CatalogPage] = []
        var etags: [String] = []
        var since: String?
        repeat {
            let reply = try server.request(
                "GET", "/v1/catalog?\(area)&limit=1000" + (since.map { "&since=\($0)" } ?? ""),
                token: device.deviceToken)
            #expect(reply.status == 200, "\(reply.text)")
            let page: CatalogPage = try reply.decode()
            #expect(page.retailers.count + page.stores.count + page.offers.count <= 1000)
            if page.more {
                #expect(reply.headers["link"]?.contains("since=\(page.cursor)") == true)
                #expect(reply.headers["link"]?.contains("near=51.5136%2C-0.1365") == true)
            }
            pages.append(page)
            etags.append(try #require(reply.headers["etag"]))
            since = page.more ? page.cursor : nil
        } while since != nil && pages.count < 10
        #expect(pages.count == 3)
        #expect(pages.map(\.full) == [true, false, false] && pages.map(\.more) == [true, true, false])
        #expect(Set(pages[0].retailers.map(\.name)) == ["Matey's", "Rival"] && pages.dropFirst().allSatisfy(\.retailers.isEmpty))
        #expect(Set(pages.flatMap(\.stores).map(\.storeID)) == ["carnaby", "next-door", "second"])
        let offers = pages.flatMap(\.offers)
        #expect(offers.count == 2_501 && Set(offers.map(\.id)).count == 2_501 && offers.contains(sushi))

        // Stopped after the first page, a client is not told 304: it goes on from there.
        let stopped = try server.request(
            "GET", "/v1/catalog?\(area)&limit=1000&since=\(pages[0].cursor)", token: device.deviceToken,
            headers: ["If-None-Match": etags[0]])
        #expect(stopped.status == 200)
        #expect(try stopped.decode(CatalogPage.self) == pages[1])
        // Done, it is, until the catalog changes.
        let done = try server.request(
            "GET", "/v1/catalog?\(area)&since=\(pages[2].cursor)", token: device.deviceToken,
            headers: ["If-None-Match": etags[2]])
        #expect(done.status == 304)
        // A cursor of the area's pages is still none of the whole feed.
        #expect(try server.catalog(device, since: pages[0].cursor).status == 400)
    }
}
