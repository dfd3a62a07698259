import Foundation
import LoyaltyTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `loyalty scan --replay` on a pseudo-terminal of its own, as a shopper runs it: the offers of a walk
/// show in turn however fast the replay ran, the replay ends at the capture's end, and a signal ends it
/// with its summary and the terminal as it was.
@Suite struct TerminalScanTests {
    /// Three offers whose beacons come near one after the other while the first is still on screen (the
    /// beacons' proximity UUID is the retailer's).
    /// `name`: the retailer's, one of its own on the shared server (no two retailers' names read alike).
    static func walkPastThreeOffers(_ server: StoryServer, name: String, firstOptions: [String] = []) throws
        -> (StoryDevice, URL, uuid: String)
    {
        let uuid = UUID().uuidString
        let store = try server.retailer(name, uuid: uuid)
        try store.setOffer(1, 1, "First sushi", firstOptions)
        try store.setOffer(1, 2, "Second pizza", [])
        try store.setOffer(1, 3, "Third coat", [])
        let shopper = try server.newAccount()
        try shopper.ok(["sync", "--all"])
        let walk = try server.walk([
            "\(uuid):1:1@0=1,20=1", "\(uuid):1:2@0=15,4=15,5=1,20=1", "\(uuid):1:3@0=15,9=15,10=1,20=1",
        ])
        return (shopper, walk, uuid)
    }

    /// A minute-long walk past one beacon replayed at its own pace, once its table is on screen.
    static func realtimeReplay() throws -> TerminalRun {
        let server = try StoryServer.shared.get()
        let shopper = try server.newAccount()
        let walk = try server.walk(["\(UUID().uuidString):1:1@0=2,60=2"])
        let scan = try TerminalRun(["scan", "--replay", walk.path, "--realtime", "--offline"], shopper)
        #expect(scan.waitFor("BEACON"), "\(scan.transcript)")
        return scan
    }

    @Test func everyOfferOfTheWalkShowsInTurnAndTheReplayEnds() throws {
        let server = try StoryServer.shared.get()
        let (shopper, walk, _) = try Self.walkPastThreeOffers(server, name: "Arcade")
        let scan = try TerminalRun(["scan", "--replay", walk.path], shopper)
        defer { scan.kill() }

        #expect(scan.waitFor("capture ended: 2 more offers; d next, r redeem, q quit"), "\(scan.transcript)")
        #expect(scan.waitFor("OFFER from Arcade: First sushi"))
        scan.send("d")
        #expect(scan.waitFor("capture ended: 1 more offer; d next, r redeem, q quit"), "\(scan.transcript)")
        #expect(scan.waitFor("OFFER from Arcade: Second pizza"))
        scan.send("r")
        #expect(scan.waitFor("redeemed \"Second pizza\": show code"), "\(scan.transcript)")
        #expect(scan.waitFor("capture ended: d dismiss, r redeem, q quit"), "\(scan.transcript)")
        #expect(scan.waitFor("OFFER from Arcade: Third coat"))
        scan.send("d")
        #expect(scan.waitForExit() == 0, "\(scan.transcript)")
        #expect(scan.transcript.contains("replayed "))
        let titles = ["First sushi", "Second pizza", "Third coat"]
        let firstShown = titles.map { scan.transcript.range(of: "OFFER from Arcade: \($0)")?.lowerBound }
        #expect(firstShown.allSatisfy { $0 != nil } && firstShown.map { $0! } == firstShown.map { $0! }.sorted())
        #expect(scan.localModes() & tcflag_t(ECHO | ICANON) == tcflag_t(ECHO | ICANON))
        #expect(try shopper.seenTitles() == Set(titles))
    }

    /// An offer still waiting when the shopper quits was never shown, so it is not recorded as seen.
    @Test func quittingLeavesTheWaitingOffersUnseen() throws {
        let server = try StoryServer.shared.get()
        let (shopper, walk, _) = try Self.walkPastThreeOffers(server, name: "Arcade 1")
        let scan = try TerminalRun(["scan", "--replay", walk.path, "--offline"], shopper)
        defer { scan.kill() }
        #expect(scan.waitFor("capture ended: 2 more offers; d next"), "\(scan.transcript)")
        scan.send("q")
        #expect(scan.waitForExit() == 0, "\(scan.transcript)")
        #expect(scan.transcript.contains("capture ended: 2 more offers not shown"), "\(scan.transcript)")
        #expect(scan.transcript.contains("replayed "), "q ends with the summary: \(scan.transcript)")
        #expect(scan.localModes() & tcflag_t(ECHO | ICANON) == tcflag_t(ECHO | ICANON))
        #expect(try shopper.seenTitles() == ["First sushi"])
    }

    /// q while a paced replay runs ends it as Ctrl-C does: the summary, exit 0, the terminal as it was.
    @Test func quittingARealtimeReplayEndsItWithItsSummary() throws {
        let scan = try Self.realtimeReplay()
        defer { scan.kill() }
        scan.send("q")
        #expect(scan.waitForExit(seconds: 10) == 0, "\(scan.transcript)")
        #expect(scan.transcript.contains("replayed "), "\(scan.transcript)")
        #expect(scan.localModes() & tcflag_t(ECHO | ICANON) == tcflag_t(ECHO | ICANON))
    }

    /// A capture damaged part-way ends the replay with an error (exit 65), the terminal as it was, whether
    /// the shopper pages through the offers or quits.
    @Test(arguments: ["ddd", "q"])
    func aDamagedCaptureEndsWithTheTerminalRestored(key: String) throws {
        let server = try StoryServer.shared.get()
        let (shopper, walk, _) = try Self.walkPastThreeOffers(server, name: "Arcade 2 \(key)")
        let damaged = walk.deletingPathExtension().appendingPathExtension("damaged.btsnoop")
        let bytes = try Data(contentsOf: walk)
        try bytes.prefix(bytes.count / 2).write(to: damaged)
        let scan = try TerminalRun(["scan", "--replay", damaged.path, "--offline"], shopper)
        defer { scan.kill() }
        #expect(scan.waitFor("capture ended"), "\(scan.transcript)")
        scan.send(key)
        #expect(scan.waitForExit() == 65, "\(scan.transcript)")
        #expect(scan.transcript.contains("is damaged"), "\(scan.transcript)")
        #expect(scan.localModes() & tcflag_t(ECHO | ICANON) == tcflag_t(ECHO | ICANON))
    }

    /// Standard input not a terminal, standard output one: the replay ends at the capture's end and says
    /// what did not show.
    @Test func withoutKeysTheReplayEndsAndSaysWhatDidNotShow() throws {
        let server = try StoryServer.shared.get()
        let (shopper, walk, _) = try Self.walkPastThreeOffers(server, name: "Arcade 3")
        let scan = try TerminalRun(["scan", "--replay", walk.path, "--offline"], shopper, standardInput: .nullDevice)
        defer { scan.kill() }
        #expect(scan.waitForExit() == 0, "\(scan.transcript)")
        #expect(scan.transcript.contains("capture ended: 2 more offers not shown"), "\(scan.transcript)")
        #expect(scan.transcript.contains("replayed "))
    }

    @Test(arguments: [SIGINT, SIGTERM, SIGHUP, SIGQUIT])
    func aSignalEndsARealtimeReplayWithItsSummaryAndTheTerminalRestored(signal: Int32) throws {
        let scan = try Self.realtimeReplay()
        defer { scan.kill() }
        #expect(scan.localModes() & tcflag_t(ECHO) == 0, "the scan reads single keys")
        Glibc.kill(scan.process.processIdentifier, signal)
        #expect(scan.waitForExit(seconds: 10) == 0, "\(scan.transcript)")
        #expect(scan.localModes() & tcflag_t(ECHO | ICANON) == tcflag_t(ECHO | ICANON))
        #expect(scan.transcript.contains("replayed "), "\(scan.transcript)")
    }

    /// A scan whose opening sync waits on a server that never answers (for up to 60 s), once it reads keys;
    /// the server's socket lives as long as the run.
    /// Whether the process is stopped (state T in /proc/PID/stat, after the command's name in parentheses).
    private static func isStopped(_ process: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(process)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(after: end)...].trimmingCharacters(in: .whitespaces).hasPrefix("T")
    }

    private static func scanWithAHangingSync() throws -> (TerminalRun, LoopbackSocket) {
        let server = try StoryServer.shared.get()
        let shopper = try server.newAccount()
        let walk = try server.walk(["\(UUID().uuidString):1:1@0=2,10=2"])
        let silent = try LoopbackSocket(listening: true)
        // The same server gone quiet, as far as the token knows.
        try shopper.ok(["config", "set", "server", silent.url, "--move-credentials"])
        let scan = try TerminalRun(["scan", "--replay", walk.path, "--timeout", "60"], shopper, server: silent.url)
        #expect(scan.waitFor(seconds: 30) { scan.localModes() & tcflag_t(ECHO) == 0 }, "the scan reads single keys")
        return (scan, silent)
    }

    /// A Ctrl-C then abandons the request (libcurl asks about once a second): the scan ends with its summary,
    /// long before the request's timeout.
    @Test func aCtrlCAbandonsASyncThatHangs() throws {
        let (scan, silent) = try Self.scanWithAHangingSync()
        defer { withExtendedLifetime(silent) { scan.kill() } }
        Glibc.kill(scan.process.processIdentifier, SIGINT)
        #expect(scan.waitForExit(seconds: 10) == 0, "\(scan.transcript)")
        #expect(scan.transcript.contains("replayed "), "\(scan.transcript)")
        #expect(scan.localModes() & tcflag_t(ECHO | ICANON) == tcflag_t(ECHO | ICANON))
    }

    /// A second signal before the first has ended the scan ends it at once, with the terminal restored. (Two
    /// SIGINTs sent together would arrive as one: a SIGTERM follows the SIGINT here.)
    @Test func aSecondSignalEndsTheScanAtOnce() throws {
        let (scan, silent) = try Self.scanWithAHangingSync()
        defer { withExtendedLifetime(silent) { scan.kill() } }
        // Both come while the process is stopped, so both are in before it handles either: sent to a running
        // process on a busy machine, the second could come after the first had ended the scan (exit 0).
        let process = scan.process.processIdentifier
        Glibc.kill(process, SIGSTOP)
        #expect(scan.waitFor(seconds: 10) { Self.isStopped(process) }, "the scan stops")
        Glibc.kill(process, SIGINT)
        Glibc.kill(process, SIGTERM)
        Glibc.kill(process, SIGCONT)
        // Whichever the dispatch queue takes second ends the process: 128 + that signal, not 0.
        let status = scan.waitForExit(seconds: 10)
        #expect(status == 128 + SIGINT || status == 128 + SIGTERM, "\(String(describing: status)) \(scan.transcript)")
        #expect(scan.localModes() & tcflag_t(ECHO | ICANON) == tcflag_t(ECHO | ICANON))
    }
}

extension StoryDevice {
    /// The titles of the offers this device's history says it saw.
    fileprivate func seenTitles() throws -> Set<String> {
        let seen = try ok(["history", "--json"]).jsonLines.filter { $0["event"] as? String == "seen" }
        return Set(seen.compactMap { $0["title"] as? String })
    }
}
