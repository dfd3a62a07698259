import Foundation

/// A retailer as every shopper sees it: whose region a proximity UUID is.
public struct CatalogRetailer: Codable, Sendable, Equatable, Identifiable {
    public var id: UUID
    public var name: String
    public var uuid: UUID

    public init(id: UUID, name: String, uuid: UUID) {
        self.id = id
        self.name = name
        self.uuid = uuid
    }
}

/// A removed offer or store: drop it from the local copy.
public struct CatalogTombstone: Codable, Sendable, Equatable {
    public var id: UUID
    public var retailerID: UUID

    public init(id: UUID, retailerID: UUID) {
        self.id = id
        self.retailerID = retailerID
    }

    public enum CodingKeys: String, CodingKey {
        case id
        case retailerID = "retailer_id"
    }
}

/// `GET /v1/catalog[?since=CURSOR][&limit=N]`. With `full` the page replaces the local copy;
/// otherwise it is applied on top of it. `cursor` is opaque: send it back as `since`, and the
/// response's ETag as `If-None-Match` (304 when nothing changed). With `more`, the feed goes on past
/// the page: ask again with its cursor (the response's `Link: rel="next"` says so before the body is
/// read) until a page without `more`. With `near`, the page is always full and whole, and holds only
/// the retailers with a store in the area, their offers and the stores in the area.
public struct CatalogPage: Codable, Sendable, Equatable {
    public var cursor: String
    public var full: Bool
    public var more: Bool
    /// The server's clock when the page was made, so clients judge validity windows in server time.
    public var serverTime: Date
    public var retailers: [CatalogRetailer]
    public var offers: [Offer]
    public var removed: [CatalogTombstone]
    public var stores: [RetailStore]
    public var removedStores: [CatalogTombstone]

    public init(
        cursor: String, full: Bool, more: Bool = false, serverTime: Date, retailers: [CatalogRetailer], offers: [Offer],
        removed: [CatalogTombstone], stores: [RetailStore] = [], removedStores: [CatalogTombstone] = []
    ) {
        self.cursor = cursor
        self.full = full
        self.more = more
        self.serverTime = serverTime
        self.retailers = retailers
        self.offers = offers
        self.removed = removed
        self.stores = stores
        self.removedStores = removedStores
    }

    public enum CodingKeys: String, CodingKey {
        case cursor, full, more
        case serverTime = "server_time"
        case retailers, offers, removed, stores
        case removedStores = "removed_stores"
    }
}

extension CatalogPage {
    /// The most rows (retailers, offers, stores and tombstones together) a page holds: `limit`'s maximum, and
    /// the size of a page asked without one.
    public static let maximumRows = 10_000

    /// The most bytes a page of `rows` rows can take, for a client to refuse a longer answer: each row as long as
    /// the longest offer (its texts at their most code points, 4 bytes of UTF-8 each; controls, which JSON writes
    /// longer, are refused in them; the image URL is ASCII), plus its other fields and the page's own.
    public static func maximumJSONBytes(rows: Int) -> Int {
        let offerTexts =
            4 * (Validation.titleLength.upperBound + Validation.descriptionMaxLength + Validation.categoryMaxLength)
            + Validation.imageURLMaxLength
        return (64 << 10) + rows * (offerTexts + 1024)
    }
}
