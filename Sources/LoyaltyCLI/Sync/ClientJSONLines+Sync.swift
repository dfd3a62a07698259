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
            ("cached_offers", .int(report.cachedOffers)), ("sightings_resolved", .int(report.sightings.resolved)),
            ("sightings_unresolved", .int(report.sightings.unresolved)),
            ("sightings_dropped", .int(report.sightings.dropped)),
            (
                "verified_offers",
                .array(
                    report.sightings.offers.map { offer in
                        JSONValue.object([
                            ("id", .string(offer.offer.id.uuidString.lowercased())),
                            ("retailer", .string(offer.retailer.name)), ("major", .int(Int(offer.offer.major))),
                            ("minor", .int(Int(offer.offer.minor))), ("title", .string(offer.offer.title)),
                        ])
                    })
            ),
            ("catalog_pages", .int(report.catalogPages)),
        ]
            + (report.carriedRetailers.map { [("carried_retailers", JSONValue.int($0))] } ?? [])
            + (report.directoryRetailers.map { [("directory_retailers", JSONValue.int($0))] } ?? []))
    }
}
