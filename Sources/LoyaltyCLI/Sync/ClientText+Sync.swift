import LoyaltyAPI
import LoyaltyClient

/// What `sync` prints.
extension ClientText {
    /// `sync`'s closing line.
    public static func synced(_ report: SyncReport) -> String {
        let catalog =
            if !report.catalogChanged {
                "catalog unchanged"
            } else if report.fullCatalog {
                "full catalog of \(report.offersReceived) offers"
            } else {
                "\(report.offersReceived) offers changed, \(report.offersRemoved) removed"
            }
        let carried = report.carriedRetailers.map { " of \($0) retailers near, heard or followed" } ?? ""
        return
            "synced: sent \(report.pushed) seen offers; \(catalog); \(report.seenPulled) seen offers from the account; \(report.cachedOffers) offers cached\(carried)"
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
