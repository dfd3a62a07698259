import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

/// The JSON lines the client commands print with `--json`, keys in the order shown: what scripts read. Each
/// command family adds its own beside its commands (`Retailer/ClientJSONLines+Retailer.swift`); here is
/// what they share.
public enum ClientJSONLines {
    /// The shopper's warning while the cache holds only the first pages of a full catalog: the offers of the
    /// pages not fetched yet are missing, so their beacons show nothing.
    public static let partialCatalogWarning =
        "the offer catalog is incomplete: a sync stopped midway; run `loyalty sync`"

    /// `{"event":"warning","code":"catalog_partial","message":..}`, before what a partial cache shows.
    public static let catalogPartial = object([
        ("event", .string("warning")), ("code", .string("catalog_partial")),
        ("message", .string(partialCatalogWarning)),
    ])

    /// A one-off line: the fields in order.
    public static func object(_ fields: [(String, JSONValue)]) -> String { JSONValue.object(fields).text }

    /// A line of a wire type's fields in the order given, keyed by the type's coding keys (so a key is the
    /// wire's, defined once), after `event` when there is one.
    static func object<Key: CodingKey>(
        _ keys: Key.Type, event: String? = nil, _ fields: KeyValuePairs<Key, JSONValue>
    ) -> String {
        object((event.map { [("event", JSONValue.string($0))] } ?? []) + fields.map { ($0.key.stringValue, $0.value) })
    }

    /// `2026-01-31T09:00:00Z`, or null.
    public static func timestamp(_ date: Date?) -> JSONValue {
        date.map { .string(LoyaltyJSON.formatTimestamp($0)) } ?? .null
    }

    static func id(_ id: UUID) -> JSONValue { .string(id.uuidString.lowercased()) }
    static func optional(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }
    static func optional(_ number: Int?) -> JSONValue { number.map { .int($0) } ?? .null }
}
