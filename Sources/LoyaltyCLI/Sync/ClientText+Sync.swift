import LoyaltyAPI
import LoyaltyClient

/// What `sync` prints.
extension ClientText {
    /// `sync`'s closing line.
    public static func synced(_ report: SyncReport) -> String {
        let catalog =
            if !report.catalogChanged {
                "catalog unchanged"
            } else if report.carriedRetailers != nil {
                "\(report.offersReceived) offers received, \(report.offersRemoved) removed"
            } else if report.fullCatalog {
                "full catalog of \(report.offersReceived) offers"
            } else {
                "\(report.offersReceived) offers changed, \(report.offersRemoved) removed"
            }
        let carried =
            report.carriedRetailers.map { "; carrying \($0) of \(report.directoryRetailers ?? $0) retailers' offers" } ?? ""
        let sightings = report.sightings
        let secure =
            sightings == SyncEngine.SightingsSent()
            ? ""
            : "; secure beacons: \(sightings.resolved) queued sightings verified, \(sightings.unresolved) not resolved, "
                + "\(sightings.dropped) dropped (too old)"
        // A presence offer of a visit the queued sightings verified: the sync is where the shopper learns it.
        let verified = sightings.offers.map { offer in
            "\nyour visit near \(TerminalText.escaped(offer.retailer.name)) \(offer.offer.major):\(offer.offer.minor) is "
                + "verified: \"\(TerminalText.escaped(offer.offer.title))\" (loyalty redeem \(offer.identity))"
        }.joined()
        return
            "synced: sent \(report.pushed) seen offers; \(catalog); \(report.seenPulled) seen offers from the account; \(report.cachedOffers) offers cached\(carried)"
            + secure + verified
    }

    /// The progress line `sync` keeps on a terminal.
    public static func progress(_ progress: SyncProgress) -> String {
        switch progress {
        case .pushingSeen(let sent): "sending seen offers: \(sent)"
        case .fetchingCatalog: "fetching the catalog..."
        case .storingOffers(let stored): "storing offers: \(stored)"
        case .pullingSeen: "fetching the account's seen offers..."
        }
    }
}
