import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

/// The JSON line of `sync`.
extension ClientJSONLines {
    /// `sync`.
    public static func synced(_ report: SyncReport) -> String {
        object([
            ("event", .string("synced")), ("pushed", .int(report.pushed)), ("full", .bool(report.fullCatalog)),
            ("catalog_changed", .bool(report.catalogChanged)), ("offers_received", .int(report.offersReceived)),
            ("offers_removed", .int(report.offersRemoved)), ("seen_pulled", .int(report.seenPulled)),
            ("cached_offers", .int(report.cachedOffers)),
        ] + (report.carriedRetailers.map { [("carried_retailers", JSONValue.int($0))] } ?? []))
    }
}
