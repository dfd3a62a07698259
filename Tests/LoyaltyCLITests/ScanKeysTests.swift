import Foundation
import LoyaltyCLI
import LoyaltyTesting
import Synchronization
import Testing

/// Keys a shopper presses, in order, each when the scan waits for one; none while the capture plays.
final class ScriptedKeys: ShopperKeys {
    private let keys: Mutex<[UInt8]>

    init(_ keys: String) { self.keys = Mutex(Array(keys.utf8)) }

    func poll() -> TerminalInput? { nil }
    func waitForKey(orReadable descriptor: Int32) -> TerminalInput? { keys.withLock { $0.isEmpty ? nil : .key($0.removeFirst()) } }
    func restore() {}
}

/// ScanPrinter's keys, in process: `loyalty scan --replay` on a captured terminal, against a real server
/// over loopback, the shopper's keys scripted. Through a pseudo-terminal and the binary: TerminalScanTests.
@Suite struct ScanKeysTests {
    /// A retailer with three offers whose beacons come near one after the other, a shopper synced with
    /// them, and the walk past them.
    static func walkPastThreeOffers() throws -> (server: TestServer, shopper: [String: String], walk: URL) {
        let server = try TestServer(.socket, clock: .machine())
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-keys-\(UUID())")
        let uuid = UUID().uuidString
        let retailer = [
            "LOYALTY_HOME": work.appendingPathComponent("retailer").path, "LOYALTY_SERVER": server.baseURL,
            "LOYALTY_ADMIN_TOKEN": server.operatorToken,
        ]
        let shopper = ["LOYALTY_HOME": work.appendingPathComponent("shopper").path, "LOYALTY_SERVER": server.baseURL]
        let walk = work.appendingPathComponent("walk.btsnoop")
        let steps: [([String], [String: String])] = [
            (["retailer", "register", "--name", "Arcade", "--uuid", uuid], retailer),
            (["retailer", "offer", "set", "1", "1", "--title", "First sushi"], retailer),
            (["retailer", "offer", "set", "1", "2", "--title", "Second pizza"], retailer),
            (["retailer", "offer", "set", "1", "3", "--title", "Third coat"], retailer),
            (["account", "create"], shopper), (["sync"], shopper),
            (
                [
                    "beacon", "simulate", "--write", walk.path, "--walk", "\(uuid):1:1@0=1,20=1",
                    "--walk", "\(uuid):1:2@0=15,4=15,5=1,20=1", "--walk", "\(uuid):1:3@0=15,9=15,10=1,20=1",
                ], [:]
            ),
        ]
        for (arguments, environment) in steps {
            let result = LoyaltyRun.inProcess(arguments, environment: environment, sink: .capturing())
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
        }
        return (server, shopper, walk)
    }

    /// The walk replayed on a captured terminal whose shopper presses `keys`: what it showed, and the titles
    /// the account has seen after it.
    func scan(pressing keys: String) throws -> (scan: Binary.Result, seen: Set<String>) {
        let (server, shopper, walk) = try Self.walkPastThreeOffers()
        let screen = OutputSink.capturingTerminal(keys: ScriptedKeys(keys))
        let scan = LoyaltyRun.inProcess(["scan", "--replay", walk.path, "--offline"], environment: shopper, sink: screen)
        #expect(scan.status == 0, "\(scan.stderr)")
        let history = LoyaltyRun.inProcess(["history", "--json"], environment: shopper, sink: .capturing())
        return withExtendedLifetime(server) { (scan, Set(history.jsonLines.compactMap { $0["title"] as? String })) }
    }

    @Test func eachKeyDismissesTheOfferOnScreenAndTheNextShows() throws {
        let (scan, seen) = try scan(pressing: "ddd")
        let titles = ["First sushi", "Second pizza", "Third coat"]
        let shown = titles.map { scan.stdout.range(of: "OFFER from Arcade: \($0)")?.lowerBound }
        #expect(shown.allSatisfy { $0 != nil }, "\(scan.stdout)")
        #expect(shown.compactMap { $0 } == shown.compactMap { $0 }.sorted())
        #expect(scan.stdout.contains("capture ended: 2 more offers; d next, r redeem, q quit"))
        #expect(scan.stdout.contains("capture ended: d dismiss, r redeem, q quit"))
        #expect(seen == Set(titles))
    }

    /// q ends the scan as Ctrl-C does; the offers still waiting never showed, so they are not seen.
    @Test func quittingLeavesTheWaitingOffersUnseen() throws {
        let (scan, seen) = try scan(pressing: "q")
        #expect(scan.stdout.contains("OFFER from Arcade: First sushi") && !scan.stdout.contains("Second pizza"))
        #expect(seen == ["First sushi"])
    }

    /// Standard input ends with offers left: the scan says how many did not show, and ends.
    @Test func noMoreKeysEndsTheScanSayingWhatDidNotShow() throws {
        let (scan, seen) = try scan(pressing: "")
        #expect(scan.stdout.contains("capture ended: 2 more offers not shown"), "\(scan.stdout)")
        #expect(seen == ["First sushi"])
    }
}
