import Foundation

// The request bodies every shopper and till sends, read by the catalog page's table-driven reader: on the server
// JSONDecoder took half of a seen push's own CPU. A body the reader refuses is decoded again by
// `LoyaltyJSON.decoder()`, which says what is wrong with it in the API's words.

extension RequestBody {
    /// The body read by its table when `Self` has one, nil otherwise or when the text does not read as a whole
    /// value of `Self`. What it reads is what `LoyaltyJSON.decoder()` reads from the same text (unknown keys are
    /// skipped, as the decoder skips them; the caller refuses them).
    public static func readByTable(_ bytes: [UInt8]) -> Self? {
        guard let table = Self.self as? any JSONTableObject.Type else { return nil }
        return bytes.withUnsafeBufferPointer { read(table, from: $0) as? Self }
    }
}

private func read<Object: JSONTableObject>(_ type: Object.Type, from bytes: UnsafeBufferPointer<UInt8>) -> Object? {
    var reader = JSONReader(bytes)
    do throws(CatalogPageJSONError) {
        let object = try Object.readJSON(&reader)
        try reader.end()
        return object
    } catch {
        return nil
    }
}

private let zeroUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

extension SeenPush: JSONTableObject {
    static let jsonName = "seen push"
    static let jsonBlank = SeenPush(items: [])
    static let jsonFields: [JSONTableField<SeenPush>] = [.array("items", { $0.items }, { $0.items = $1 })]
}

extension SeenItem: JSONTableObject {
    static let jsonName = "seen item"
    static let jsonBlank = SeenItem(offerID: zeroUUID, seenAt: Date(timeIntervalSince1970: 0))
    static let jsonFields: [JSONTableField<SeenItem>] = [
        .required("offer_id", { $0.offerID }, { $0.offerID = $1 }),
        .required("seen_at", { $0.seenAt }, { $0.seenAt = $1 }),
    ]
}

extension RedemptionRequest: JSONTableObject {
    static let jsonName = "redemption request"
    static let jsonBlank = RedemptionRequest(offerID: zeroUUID)
    static let jsonFields: [JSONTableField<RedemptionRequest>] = [
        .required("offer_id", { $0.offerID }, { $0.offerID = $1 })
    ]
}

extension TillCodeRequest: JSONTableObject {
    static let jsonName = "code request"
    static let jsonBlank = TillCodeRequest(code: "")
    static let jsonFields: [JSONTableField<TillCodeRequest>] = [.required("code", { $0.code }, { $0.code = $1 })]
}
