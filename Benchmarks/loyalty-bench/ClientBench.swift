// Speed figures: the real `loyalty` binary, each command timed as a whole process (wall
// clock, start to exit), against a real server holding a 100,000-offer catalog.
import Foundation

private let catalogSize = 100_000

@MainActor func benchClient(replaying capture: URL, reports: Int) throws {
    print("\n== client: loyalty against loyalty-server with \(catalogSize) offers")
    let server = try BenchSite()
    defer { server.stop() }
    try server.seedCatalog(offers: catalogSize)
    let home = server.work.appendingPathComponent("device")
    let environment = ["LOYALTY_HOME": home.path, "LOYALTY_SERVER": server.url]
    func loyalty(_ arguments: String...) throws -> Double {
        let run = try runMeasured("loyalty", arguments, environment: environment)
        guard run.status == 0 else {
            throw BenchFailure("loyalty \(arguments.joined(separator: " ")) exited \(run.status)")
        }
        return run.seconds
    }
    _ = try loyalty("account", "create")

    let help = median(try (0..<5).map { _ in try loyalty("--help") })
    record(
        "loyalty --help", String(format: "%.1f ms (median of 5)", help * 1e3), target: "< 20 ms",
        met: help < 0.02)

    // Into an empty cache each time: the device keeps its account, the cache file goes.
    let cache = home.appendingPathComponent("cache.sqlite")
    let fullSync = median(
        try (0..<3).map { _ in
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.removeItem(atPath: cache.path + suffix)
            }
            return try loyalty("sync")
        })
    record(
        "loyalty sync, \(catalogSize) offers into an empty cache",
        String(format: "%.2f s (median of 3)", fullSync),
        target: "< 2 s", met: fullSync < 2)

    let deltaSync = median(
        try (1...3).map { round in
            try server.touchOffer(round * 3_331)
            return try loyalty("sync")
        })
    record(
        "loyalty sync, a one-offer delta", String(format: "%.1f ms (median of 3)", deltaSync * 1e3),
        target: "< 50 ms", met: deltaSync < 0.05)

    let listing = median(try (0..<3).map { _ in try loyalty("offers", "--json") })
    record(
        "loyalty offers --json, \(catalogSize) cached",
        String(format: "%.1f ms (median of 3)", listing * 1e3),
        target: "< 100 ms", met: listing < 0.1)

    let replay = try runMeasured(
        "loyalty", ["scan", "--replay", capture.path, "--json"], environment: environment)
    let replayRate = Double(reports) / replay.seconds
    record(
        "loyalty scan --replay (1M), \(catalogSize) cached offers", rate(reports, replay.seconds),
        target: ">= 1 M/s", met: replayRate >= 1e6 && replay.status == 0)
    record(
        "peak RSS, that replay", String(format: "%.1f MB", replay.peakMB), target: "< 60 MB",
        met: replay.peakMB < 60 && replay.status == 0)
}
