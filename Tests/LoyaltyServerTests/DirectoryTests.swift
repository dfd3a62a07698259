import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Testing

@testable import LoyaltyServer

/// The directory every device holds, and the parts of the catalog (a working set's, a bucket's) it fetches.
@Suite struct DirectoryTests {
    /// Three retailers with a store or two and offers each.
    private func threeRetailers(_ server: TestServer) throws -> [RetailerCredentials] {
        let retailers = try ["Matey's", "Rival", "Far away"].map { try server.registerRetailer($0) }
        for (index, retailer) in retailers.enumerated() {
            try server.putStore(
                retailer, "main",
                StoreDraft(name: "Main", latitude: 51.5 + Double(index), longitude: -0.1, radiusMetres: 80 + index))
            for minor in 1...(index + 2) {
                try server.putOffer(retailer, major: 1, minor: minor, OfferDraft(title: "\(retailer.name) \(minor)"))
            }
        }
        return retailers
    }

    @Test func theDirectoryHasEveryRetailerWithItsStoresBucketAndHeadAndNoOffers() throws {
        let server = try TestServer()
        let retailers = try threeRetailers(server)
        let device = try server.createAccount()
        let reply = try server.request("GET", "/v1/directory", token: device.deviceToken)
        #expect(reply.status == 200, "\(reply.text)")
        let directory: RetailerDirectory = try reply.decode()
        #expect(directory.buckets == 1)
        #expect(directory.retailers.map(\.name) == ["Far away", "Matey's", "Rival"])
        #expect(Set(directory.retailers.map(\.uuid)) == Set(retailers.map(\.uuid)))
        let matey = try #require(directory.retailers.first { $0.name == "Matey's" })
        #expect(matey.stores == [DirectoryStore(latitude: 51.5, longitude: -0.1, radiusMetres: 80)])
        #expect(!reply.text.contains("Matey's 1"), "no offers in the directory")
        // One more offer moves Matey's head and no one else's, and the directory's tag with it.
        let tag = try #require(reply.headers["etag"])
        #expect(try server.request("GET", "/v1/directory", token: device.deviceToken, headers: ["If-None-Match": tag]).status == 304)
        try server.putOffer(retailers[0], major: 2, minor: 1, OfferDraft(title: "New"))
        let after = try server.request("GET", "/v1/directory", token: device.deviceToken, headers: ["If-None-Match": tag])
        #expect(after.status == 200)
        let moved: RetailerDirectory = try after.decode()
        for retailer in directory.retailers {
            let now = try #require(moved.retailers.first { $0.id == retailer.id })
            #expect(retailer.name == "Matey's" ? now.head > retailer.head : now.head == retailer.head, "\(retailer.name)")
        }
    }

    /// A working set's part: its retailers' offers and stores only; a delta from its cursor holds their changes and
    /// tombstones and nothing of the others; its tag answers 304 while they do not change, whatever else does.
    @Test func aPartHoldsItsRetailersOnlyAndResumesByDelta() throws {
        let server = try TestServer()
        let retailers = try threeRetailers(server)
        let device = try server.createAccount()
        let ids = [retailers[0].id, retailers[2].id]
        let target = "/v1/catalog?retailers=\(ids.map(\.uuidString).joined(separator: ","))"
        let first = try server.request("GET", target, token: device.deviceToken)
        #expect(first.status == 200, "\(first.text)")
        let page: CatalogPage = try first.decode()
        #expect(page.full && !page.more)
        #expect(Set(page.retailers.map(\.id)) == Set(ids) && Set(page.offers.map(\.retailerID)) == Set(ids))
        #expect(page.offers.count == 2 + 4 && page.stores.count == 2)
        let tag = try #require(first.headers["etag"])

        // Another retailer's change: still 304 for this part.
        try server.putOffer(retailers[1], major: 9, minor: 9, OfferDraft(title: "Rival's new"))
        let unchanged = try server.request(
            "GET", "\(target)&since=\(page.cursor)", token: device.deviceToken, headers: ["If-None-Match": tag])
        #expect(unchanged.status == 304)

        // A change and a removal of the part's own: a delta with them alone.
        let fresh = try server.putOffer(retailers[0], major: 3, minor: 3, OfferDraft(title: "Fresh"))
        #expect(try server.request("DELETE", "/v1/retailer/offers/1/1", token: retailers[2].apiKey).status == 204)
        let delta = try server.request(
            "GET", "\(target)&since=\(page.cursor)", token: device.deviceToken, headers: ["If-None-Match": tag])
        #expect(delta.status == 200)
        let changes: CatalogPage = try delta.decode()
        #expect(!changes.full && changes.offers == [fresh] && changes.removed.map(\.retailerID) == [ids[1]])

        // The part's cursor never resumes the whole feed.
        let wrong = try server.request("GET", "/v1/catalog?since=\(changes.cursor)", token: device.deviceToken)
        #expect(wrong.status == 400, "\(wrong.text)")
    }

    /// A bucket's answer is every retailer the directory puts in that bucket, and nothing the directory does not
    /// already say of any other: the same rows as asking for those retailers by id.
    @Test func aBucketAnswersEveryRetailerOfItAndNothingElse() throws {
        let server = try TestServer()
        _ = try threeRetailers(server)
        for index in 0..<13 { _ = try server.registerRetailer("Shop \(index)") }
        let device = try server.createAccount()
        let directory: RetailerDirectory = try server.request("GET", "/v1/directory", token: device.deviceToken).decode()
        #expect(directory.retailers.count == 16 && directory.buckets == 1)
        for buckets in [1, 2, 4, 16] {
            for bucket in 0..<buckets {
                let members = directory.retailers.filter {
                    Database.bucket(of: $0.uuid, among: buckets) == bucket
                }.map(\.id)
                let reply = try server.request(
                    "GET", "/v1/catalog?bucket=\(bucket)&buckets=\(buckets)", token: device.deviceToken)
                #expect(reply.status == 200, "\(reply.text)")
                let page: CatalogPage = try reply.decode()
                #expect(Set(page.retailers.map(\.id)) == Set(members), "bucket \(bucket) of \(buckets)")
                #expect(Set(page.offers.map(\.retailerID)).isSubset(of: Set(members)))
                #expect(Set(page.stores.map(\.retailerID)).isSubset(of: Set(members)))
                if !members.isEmpty {
                    let byID: CatalogPage = try server.request(
                        "GET", "/v1/catalog?retailers=\(members.map(\.uuidString).joined(separator: ","))",
                        token: device.deviceToken
                    ).decode()
                    #expect(byID.offers == page.offers && byID.stores == page.stores && byID.retailers == page.retailers)
                }
            }
        }
        #expect(Database.bucketCount(retailers: 15) == 1 && Database.bucketCount(retailers: 32) == 2)
        #expect(Database.bucketCount(retailers: 10_000) == 512)
    }

    @Test(arguments: [
        "retailers=", "retailers=nope", "retailers=\(UUID().uuidString),x", "bucket=1", "buckets=4",
        "bucket=4&buckets=4", "bucket=-1&buckets=4", "bucket=0&buckets=0", "bucket=0&buckets=70000",
        "retailers=\(UUID().uuidString)&bucket=0&buckets=1",
        "retailers=" + (0...200).map { _ in UUID().uuidString }.joined(separator: ","),
    ])
    func aBadPartIsRefused(query: String) throws {
        let server = try TestServer()
        let device = try server.createAccount()
        let reply = try server.request("GET", "/v1/catalog?\(query)", token: device.deviceToken)
        #expect([400, 422].contains(reply.status), "\(query): \(reply.status) \(reply.text)")
        #expect(reply.text.contains("\"field\""), "\(reply.text)")
    }
}
