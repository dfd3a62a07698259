import Foundation
import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

let syncCommand = CommandSpec(
    name: "sync",
    summary: "Send the offers seen here, fetch the catalog's changes and what the account's other devices saw.",
    synopsis: "[--full]",
    discussion: """
        Safe to interrupt at any point: each step is committed on its own, and seen offers leave the
        outbox only once the server has them. A cursor the server no longer serves (410) turns into a
        full sync by itself. --full fetches everything again and rebuilds a damaged cache file.

        \(clientDiscussion)
        """,
    options: [.flag("full", "Fetch the whole catalog and seen set; rebuild the cache if it is damaged.")]
        + clientOptions,
    run: clientCommand { context in
        let full = context.arguments.flag("full")
        let cache: OfferCache
        do {
            cache = try context.openCache()
        } catch ClientError.corruptCache(let message) where full {
            printError("warning: \(message); starting a new cache")
            try OfferCache.discard(file: context.home.cacheFile)
            cache = try context.openCache()
        }
        let progress = SyncProgressLine(enabled: isatty(STDERR_FILENO) == 1)
        let report = try context.syncEngine(cache).sync(full: full, progress: progress.show)
        progress.finish()
        if context.json {
            return printJSONLine([
                ("event", .string("synced")), ("pushed", .int(report.pushed)), ("full", .bool(report.fullCatalog)),
                ("catalog_changed", .bool(report.catalogChanged)), ("offers_received", .int(report.offersReceived)),
                ("offers_removed", .int(report.offersRemoved)), ("seen_pulled", .int(report.seenPulled)),
                ("cached_offers", .int(report.cachedOffers)),
            ])
        }
        let catalog =
            if !report.catalogChanged {
                "catalog unchanged"
            } else if report.fullCatalog {
                "full catalog of \(report.offersReceived) offers"
            } else {
                "\(report.offersReceived) offers changed, \(report.offersRemoved) removed"
            }
        printOut(
            "synced: sent \(report.pushed) seen offers; \(catalog); \(report.seenPulled) seen offers from the account; \(report.cachedOffers) offers cached"
        )
    })

/// One self-overwriting line on a terminal's standard error; nothing in a pipe.
final class SyncProgressLine {
    private let enabled: Bool
    private var shown = false

    init(enabled: Bool) { self.enabled = enabled }

    func show(_ progress: SyncProgress) {
        guard enabled else { return }
        let text =
            switch progress {
            case .pushingSeen(let sent): "sending seen offers: \(sent)"
            case .fetchingCatalog: "fetching the catalog..."
            case .storingOffers(let stored, let total): "storing offers: \(stored)/\(total)"
            case .pullingSeen: "fetching the account's seen offers..."
            }
        printError("\r\u{1B}[K" + text, newline: false)
        shown = true
    }

    func finish() {
        if shown { printError("\r\u{1B}[K", newline: false) }
    }
}
