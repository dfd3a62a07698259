// The catalog page's own JSON coder against Foundation's (`LoyaltyJSON.encoder()`/`decoder()`) on one
// 100,000-offer page, both directions, in the same run: the server encodes pages, the client decodes them.
// Hand-written code stays only where it is at least twice as fast.
import Foundation
import JSONCoding
import LoyaltyAPI

private let pageOffers = 100_000

@MainActor func benchJSON() throws {
    print("\n== json: the catalog page coder against Foundation's, one page of \(pageOffers) offers")
    let page = syntheticPage(offers: pageOffers)
    let foundationBytes = Array(try LoyaltyJSON.encoder().encode(page))
    guard try page.json() == foundationBytes else { throw BenchFailure("the two encoders wrote different bytes") }
    guard try CatalogPage(json: foundationBytes) == page else { throw BenchFailure("the page did not round-trip") }
    let megabytes = Double(foundationBytes.count) / 1e6

    func compare(_ name: String, own: () throws -> Void, foundation: () throws -> Void) throws {
        // Alternated, so a change in the machine's load falls on both.
        var ownSeconds: [Double] = []
        var foundationSeconds: [Double] = []
        for _ in 0..<5 {
            ownSeconds.append(try seconds(own))
            foundationSeconds.append(try seconds(foundation))
        }
        let (mine, theirs) = (median(ownSeconds), median(foundationSeconds))
        record(
            "\(name), \(pageOffers)-offer page (\(String(format: "%.1f", megabytes)) MB)",
            String(
                format: "%.0f ms = %.1fx Foundation's %.0f ms (median of 5)", mine * 1e3, theirs / mine, theirs * 1e3),
            target: ">= 2x Foundation", met: theirs / mine >= 2)
    }
    try compare("encode (server)", own: { _ = try page.json() }, foundation: { _ = try LoyaltyJSON.encoder().encode(page) })
    let data = Data(foundationBytes)
    try compare(
        "decode (client)", own: { _ = try CatalogPage(json: foundationBytes) },
        foundation: { _ = try LoyaltyJSON.decoder().decode(CatalogPage.self, from: data) })
}

/// A full page as the server sends it: every optional present on some offers, a fraction of a second on some dates.
private func syntheticPage(offers: Int) -> CatalogPage {
    let start = Date(timeIntervalSince1970: 1_780_000_000)
    let retailers = (0..<20).map { index in
        CatalogRetailer(id: UUID(), name: "Retailer \(index) & Sons", uuid: UUID())
    }
    let offers = (0..<offers).map { index in
        let retailer = retailers[index % retailers.count]
        return Offer(
            id: UUID(), retailerID: retailer.id, major: UInt16(index / 1000 % 65_536), minor: UInt16(index % 1000),
            title: "\(index % 7 * 10)% off \"everything\" in aisle \(index % 40)",
            description: index % 2 == 0 ? "While stocks last. Not with other offers." : nil,
            category: index % 3 == 0 ? "food" : nil,
            imageURL: index % 4 == 0 ? "https://img.example.com/offers/\(index).png" : nil,
            startsAt: index % 5 == 0 ? start : nil, endsAt: index % 5 == 0 ? start + 86_400 * 30 : nil,
            perShopperLimit: 1 + index % 3, totalLimit: index % 6 == 0 ? 500 : nil,
            reshowAfterSeconds: index % 8 == 0 ? 3600 : nil,
            updatedAt: start + Double(index) * 0.125)
    }
    let stores = (0..<1_000).map { index in
        RetailStore(
            id: UUID(), retailerID: retailers[index % retailers.count].id, storeID: "store-\(index)",
            name: "Store \(index)", latitude: 51.5 + Double(index) / 7919, longitude: -0.12 - Double(index) / 104_729,
            radiusMetres: 150, updatedAt: start)
    }
    let removed = (0..<1_000).map { _ in CatalogTombstone(id: UUID(), retailerID: retailers[0].id) }
    return CatalogPage(
        cursor: "v1.12345.67890", full: true, more: false, serverTime: start, retailers: retailers, offers: offers,
        removed: removed, stores: stores, removedStores: [])
}
