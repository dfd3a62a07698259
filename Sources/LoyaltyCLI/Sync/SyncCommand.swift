import Arguments
import Foundation
import LoyaltyAPI
import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

private enum Sync {
    static let full = Flag("full", help: "Fetch the catalog carried and the seen set again; rebuild the cache if it is damaged.")
    static let near = Option<String>(
        "near", value: "LAT,LON",
        help: "The working set's home area (kept); with --all, only the catalog around this point (decimal degrees).")
    static let radius = Option<String>("radius-km", value: "KM", help: "With --near: the radius of the area (default 10).")
    static let workingSet = Flag(
        "working-set",
        help: "Carry the directory and the offers of the retailers near (--near), heard or followed (the default; after --all).")
    static let all = Flag("all", help: "Carry the whole catalog, in this sync and the next ones (until --working-set).")
}

let syncCommand = Command(
    name: "sync",
    summary:
        "Send the offers seen here, fetch the catalog's changes and what the account's other devices saw.",
    discussion: """
        Safe to interrupt at any point: each step is committed on its own, and seen offers leave the
        outbox only once the server has them. A cursor the server no longer serves (410) turns into a
        full sync by itself. --full fetches everything carried again and rebuilds a damaged cache file.

        By default the cache carries a directory of every retailer and the offers of its working set
        only: the retailers with a store within --radius-km (default 10) of --near (the home area, kept
        for the next syncs), those whose beacons a scan heard (fetched at once when online, else at the
        next sync, by bucket: the server learns one of several retailers, not which), and those you
        follow (`loyalty follow NAME`). A retailer that has changed comes as a delta, one that has not
        costs nothing; one not near, heard or followed for a week leaves the cache, but never an offer
        that waits to be shown or redeemed. When the directory has a single bucket (a deployment of
        fewer than 32 retailers), a heard beacon's fetch would bring every retailer anyway, so the cache
        carries them all. A cache from before the working set became the default turns to one at its
        next sync, keeping its seen offers, outbox, redemptions and the offers that wait.

        --all carries the whole catalog instead, in this sync and the next ones (scans' syncs too),
        until --working-set; `--full --all` fetches all of it again. With --all, --near keeps only the
        part of the catalog around a point (the retailers with a store within --radius-km, their offers
        and those stores), and a later sync without --near fetches the whole catalog again.

        \(clientDiscussion)
        """,
    options: [Sync.full, Sync.near, Sync.radius, Sync.workingSet, Sync.all] + ClientOptions.all,
    run: clientCommand { context in
        let full = context.arguments.flag(Sync.full)
        let area = try catalogArea(context.arguments)
        let (workingSet, all) = (context.arguments.flag(Sync.workingSet), context.arguments.flag(Sync.all))
        if workingSet && all { throw context.arguments.usageError("--working-set and --all: choose one") }
        let cache: OfferCache
        do {
            cache = try context.openCache()
        } catch let error as ClientError where full {
            guard case .corruptCache = error else { throw error }
            context.output.error("warning: \(error); starting a new cache")
            try OfferCache.discard(file: context.home.cacheFile)
            cache = try context.openCache()
        }
        if workingSet { try cache.startWorkingSet(home: area) }
        if all { try cache.stopWorkingSet() }
        let progress = SyncProgressLine(context.output)
        let report = try context.syncEngine(cache).sync(
            full: full, area: area, showingVerifiedOffers: true, progress: progress.show)
        progress.finish()
        context.output.emit(text: ClientText.synced(report), json: ClientJSONLines.synced(report))
    })

/// `--near LAT,LON [--radius-km R]`, checked as the server checks it.
private func catalogArea(_ arguments: ParsedArguments) throws -> CatalogArea? {
    try arguments.checked {
        try CatalogArea.fromOptions(near: arguments.value(Sync.near), radiusKilometres: arguments.value(Sync.radius))
    }
}

/// One self-overwriting line on a terminal's standard error; nothing when standard error is not one.
final class SyncProgressLine {
    private let output: CommandOutput
    private let enabled: Bool
    private var shown = false

    init(_ output: CommandOutput) {
        self.output = output
        enabled = output.sink === OutputSink.standard && isatty(STDERR_FILENO) == 1
    }

    func show(_ progress: SyncProgress) {
        guard enabled else { return }
        output.error("\r\u{1B}[K" + ClientText.progress(progress), newline: false)
        shown = true
    }

    func finish() {
        if shown { output.error("\r\u{1B}[K", newline: false) }
    }
}
