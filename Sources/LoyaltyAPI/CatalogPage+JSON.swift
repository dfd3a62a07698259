import Foundation
import JSONCoding

// The catalog page's own JSON coder: `make bench` (section json) measures it against Foundation's on a
// 100,000-offer page. It writes the bytes `LoyaltyJSON.encoder()` writes (sorted keys, absent optionals left
// out, upper-case UUIDs) and reads what `LoyaltyJSON.decoder()` reads (unknown keys ignored, null as absent),
// with the same keys as the types' `CodingKeys`. The tables below are its whole description of the page.

extension CatalogPage {
    /// Reads a page as `LoyaltyJSON.decoder()` would, without Foundation's decoder.
    public init(json: [UInt8]) throws(JSONCodingError) {
        let result: Result<CatalogPage, JSONCodingError> = json.withUnsafeBufferPointer { bytes in
            var reader = JSONReader(bytes)
            do throws(JSONCodingError) {
                let page = try CatalogPage.readJSON(&reader)
                try reader.end()
                return .success(page)
            } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }

    /// The bytes `LoyaltyJSON.encoder()` writes for the page; fails only on a non-finite coordinate.
    public func json() throws(JSONCodingError) -> [UInt8] {
        var writer = JSONWriter()
        writer.bytes.reserveCapacity(256 + offers.count * 400 + stores.count * 250 + retailers.count * 120)
        try writeJSON(&writer)
        return writer.bytes
    }
}

/// What a table's `jsonBlank` holds where a required field will be read.
let zeroUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
let zeroDate = Date(timeIntervalSince1970: 0)

extension CatalogPage: JSONTableObject {
    package static let jsonName = "page"
    package static let jsonBlank = CatalogPage(
        cursor: "", full: false, serverTime: zeroDate, retailers: [], offers: [], removed: [])
    package static let jsonFields: [JSONTableField<CatalogPage>] = [
        .required("cursor", { $0.cursor }, { $0.cursor = $1 }),
        .required("full", { $0.full }, { $0.full = $1 }),
        .required("more", { $0.more }, { $0.more = $1 }),
        .array("offers", { $0.offers }, { $0.offers = $1 }),
        .array("removed", { $0.removed }, { $0.removed = $1 }),
        .array("removed_stores", { $0.removedStores }, { $0.removedStores = $1 }),
        .array("retailers", { $0.retailers }, { $0.retailers = $1 }),
        .required("server_time", { $0.serverTime }, { $0.serverTime = $1 }),
        .array("stores", { $0.stores }, { $0.stores = $1 }),
    ]
}

extension Offer: JSONTableObject {
    package static let jsonName = "offer"
    package static let jsonBlank = Offer(
        id: zeroUUID, retailerID: zeroUUID, major: 0, minor: 0, title: "", updatedAt: zeroDate)
    package static let jsonFields: [JSONTableField<Offer>] = [
        .optional("category", { $0.category }, { $0.category = $1 }),
        .optional("description", { $0.description }, { $0.description = $1 }),
        .optional("ends_at", { $0.endsAt }, { $0.endsAt = $1 }),
        .required("id", { $0.id }, { $0.id = $1 }),
        .optional("image_url", { $0.imageURL }, { $0.imageURL = $1 }),
        .required("major", { $0.major }, { $0.major = $1 }),
        .required("minor", { $0.minor }, { $0.minor = $1 }),
        .required("per_shopper_limit", { $0.perShopperLimit }, { $0.perShopperLimit = $1 }),
        .optional("presence_required", { $0.presenceRequired }, { $0.presenceRequired = $1 }),
        .optional("reshow_after_s", { $0.reshowAfterSeconds }, { $0.reshowAfterSeconds = $1 }),
        .required("retailer_id", { $0.retailerID }, { $0.retailerID = $1 }),
        .optional("schedule", { $0.schedule }, { $0.schedule = $1 }),
        .optional("shows_per_day", { $0.showsPerDay }, { $0.showsPerDay = $1 }),
        .optional("starts_at", { $0.startsAt }, { $0.startsAt = $1 }),
        .required("title", { $0.title }, { $0.title = $1 }),
        .optional("total_limit", { $0.totalLimit }, { $0.totalLimit = $1 }),
        .required("updated_at", { $0.updatedAt }, { $0.updatedAt = $1 }),
    ]
}

extension CatalogRetailer: JSONTableObject {
    package static let jsonName = "retailer"
    package static let jsonBlank = CatalogRetailer(id: zeroUUID, name: "", uuid: zeroUUID)
    package static let jsonFields: [JSONTableField<CatalogRetailer>] = [
        .required("id", { $0.id }, { $0.id = $1 }),
        .required("name", { $0.name }, { $0.name = $1 }),
        .required("uuid", { $0.uuid }, { $0.uuid = $1 }),
    ]
}

extension CatalogTombstone: JSONTableObject {
    package static let jsonName = "tombstone"
    package static let jsonBlank = CatalogTombstone(id: zeroUUID, retailerID: zeroUUID)
    package static let jsonFields: [JSONTableField<CatalogTombstone>] = [
        .required("id", { $0.id }, { $0.id = $1 }),
        .required("retailer_id", { $0.retailerID }, { $0.retailerID = $1 }),
    ]
}

extension RetailStore: JSONTableObject {
    package static let jsonName = "store"
    package static let jsonBlank = RetailStore(
        id: zeroUUID, retailerID: zeroUUID, storeID: "", name: "", latitude: 0, longitude: 0, radiusMetres: 0,
        updatedAt: zeroDate)
    package static let jsonFields: [JSONTableField<RetailStore>] = [
        .required("id", { $0.id }, { $0.id = $1 }),
        .required("latitude", { $0.latitude }, { $0.latitude = $1 }),
        .required("longitude", { $0.longitude }, { $0.longitude = $1 }),
        .required("name", { $0.name }, { $0.name = $1 }),
        .required("radius_m", { $0.radiusMetres }, { $0.radiusMetres = $1 }),
        .required("retailer_id", { $0.retailerID }, { $0.retailerID = $1 }),
        .required("store_id", { $0.storeID }, { $0.storeID = $1 }),
        .required("updated_at", { $0.updatedAt }, { $0.updatedAt = $1 }),
    ]
}

extension CatalogPage {
    /// One row of a page, as `read(json:rows:progress:)` hands it over.
    public enum Row: Sendable {
        case retailer(CatalogRetailer)
        case offer(Offer)
        case removed(CatalogTombstone)
        case store(RetailStore)
        case removedStore(CatalogTombstone)
    }

    /// Reads a page without holding its rows: its own fields come back (its arrays empty), and each row goes to
    /// `row` as it is read; `row` returns false to stop, and the read then fails. `progress` is told about every 4 MiB how far reading has come, so that a caller reading a mapped file
    /// can let the bytes behind go: no value is longer than 64 KiB, so memory stays a few MiB whatever the page.
    public static func read(
        json: UnsafeBufferPointer<UInt8>, rows row: (Row) -> Bool, progress: @escaping (Int) -> Void
    ) throws(JSONCodingError) -> CatalogPage {
        var reader = JSONReader(json)
        reader.progress = progress
        let fields = jsonFields
        var page = jsonBlank
        var found: UInt64 = 0
        try reader.object(jsonName) { reader, key throws(JSONCodingError) in
            guard let index = fields.firstIndex(where: { key.is($0.key) }) else { return try reader.skipValue() }
            found |= 1 << index
            switch fields[index].key.description {
            case "offers": try rows(&reader, "offers", Row.offer, row)
            case "removed": try rows(&reader, "removed", Row.removed, row)
            case "removed_stores": try rows(&reader, "removed_stores", Row.removedStore, row)
            case "retailers": try rows(&reader, "retailers", Row.retailer, row)
            case "stores": try rows(&reader, "stores", Row.store, row)
            default: try fields[index].read(&reader, &page)
            }
        }
        for (index, field) in fields.enumerated() where field.required && found & 1 << index == 0 {
            throw reader.missing(field.key, in: jsonName)
        }
        try reader.end()
        return page
    }

    private static func rows<Element: JSONTableValue>(
        _ reader: inout JSONReader, _ what: String, _ make: (Element) -> Row, _ row: (Row) -> Bool
    ) throws(JSONCodingError) {
        try reader.forEach(what) { reader throws(JSONCodingError) in
            guard row(make(try Element.readJSON(&reader))) else { throw reader.failure("stopped while storing the page") }
        }
    }
}
