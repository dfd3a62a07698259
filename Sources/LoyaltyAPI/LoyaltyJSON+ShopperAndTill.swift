import Foundation
import JSONCoding

// The request bodies every shopper and till sends, and the server's answers to them, read and written by the catalog
// page's table-driven coder: Foundation's coders took about a quarter of the server's CPU on a seen push. A body the
// reader refuses is decoded again by `LoyaltyJSON.decoder()`, which says what is wrong with it in the API's words.

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
    do throws(JSONCodingError) {
        let object = try Object.readJSON(&reader)
        try reader.end()
        return object
    } catch {
        return nil
    }
}

extension SeenPush: JSONTableObject {
    package static let jsonName = "seen push"
    package static let jsonBlank = SeenPush(items: [])
    package static let jsonFields: [JSONTableField<SeenPush>] = [.array("items", { $0.items }, { $0.items = $1 })]
}

extension SeenItem: JSONTableObject {
    package static let jsonName = "seen item"
    package static let jsonBlank = SeenItem(offerID: zeroUUID, seenAt: zeroDate)
    package static let jsonFields: [JSONTableField<SeenItem>] = [
        .required("offer_id", { $0.offerID }, { $0.offerID = $1 }),
        .required("seen_at", { $0.seenAt }, { $0.seenAt = $1 }),
    ]
}

extension RedemptionRequest: JSONTableObject {
    package static let jsonName = "redemption request"
    package static let jsonBlank = RedemptionRequest(offerID: zeroUUID)
    package static let jsonFields: [JSONTableField<RedemptionRequest>] = [
        .required("offer_id", { $0.offerID }, { $0.offerID = $1 })
    ]
}

extension TillCodeRequest: JSONTableObject {
    package static let jsonName = "code request"
    package static let jsonBlank = TillCodeRequest(code: "")
    package static let jsonFields: [JSONTableField<TillCodeRequest>] = [.required("code", { $0.code }, { $0.code = $1 })]
}

extension LoyaltyJSON {
    /// The bytes `encoder()` writes for `value`, written by its type's table when it has one (the answers to the
    /// requests shoppers and tills send most); nil for a type without one.
    public static func bytesByTable(_ value: some Encodable) -> [UInt8]? {
        guard let object = value as? any JSONTableObject else { return nil }
        var writer = JSONWriter()
        writer.bytes.reserveCapacity(256)
        do throws(JSONCodingError) {
            try object.writeJSON(&writer)
        } catch {
            return nil
        }
        return writer.bytes
    }
}

extension SeenPushResult: JSONTableObject {
    package static let jsonName = "seen push result"
    package static let jsonBlank = SeenPushResult(added: 0)
    package static let jsonFields: [JSONTableField<SeenPushResult>] = [.required("added", { $0.added }, { $0.added = $1 })]
}

extension Redemption: JSONTableObject {
    package static let jsonName = "redemption"
    package static let jsonBlank = Redemption(id: zeroUUID, offerID: zeroUUID, code: "", redeemedAt: zeroDate)
    package static let jsonFields: [JSONTableField<Redemption>] = [
        .optional("accepted_at", { $0.acceptedAt }, { $0.acceptedAt = $1 }),
        .required("code", { $0.code }, { $0.code = $1 }),
        .required("offer_id", { $0.offerID }, { $0.offerID = $1 }),
        .required("redeemed_at", { $0.redeemedAt }, { $0.redeemedAt = $1 }),
        .required("redemption_id", { $0.id }, { $0.id = $1 }),
    ]
}

extension TillCode: JSONTableObject {
    package static let jsonName = "till code"
    package static let jsonBlank = TillCode(
        code: "", status: .valid, offerID: zeroUUID, major: 0, minor: 0, title: "",
        redeemedAt: zeroDate)
    package static let jsonFields: [JSONTableField<TillCode>] = [
        .optional("accepted_at", { $0.acceptedAt }, { $0.acceptedAt = $1 }),
        .optional("accepted_till", { $0.acceptedTill }, { $0.acceptedTill = $1 }),
        .required("code", { $0.code }, { $0.code = $1 }),
        .required("major", { $0.major }, { $0.major = $1 }),
        .required("minor", { $0.minor }, { $0.minor = $1 }),
        .required("offer_id", { $0.offerID }, { $0.offerID = $1 }),
        .required("redeemed_at", { $0.redeemedAt }, { $0.redeemedAt = $1 }),
        .required("status", { $0.status }, { $0.status = $1 }),
        .required("title", { $0.title }, { $0.title = $1 }),
    ]
}

extension TillCode.Status: JSONTableValue {
    package func writeJSON(_ writer: inout JSONWriter) { writer.string(rawValue) }
    package static func readJSON(_ reader: inout JSONReader) throws(JSONCodingError) -> TillCode.Status {
        let start = reader.index
        guard let status = Self(rawValue: try reader.string()) else {
            reader.index = start
            throw reader.failure("expected valid or accepted")
        }
        return status
    }
}
