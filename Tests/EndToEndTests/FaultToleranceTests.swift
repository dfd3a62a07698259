import Foundation
import LoyaltyTesting
import Testing

/// The short, always-run versions of `make check`'s fault part: the real server (with its own embedded
/// PostgreSQL) and the real client, one fault each. `scripts/check-faults.py` runs them under load.
@Suite(.serialized) struct FaultToleranceTests {
    let loyalty = Binary("loyalty")
    let uuid = "8F0C1DDC-11E5-4A07-8910-425941B072F9"

    /// The network to the server is cut: scan still shows the cached offers, sync fails saying so and keeps the
    /// outbox, and once the server is reachable the next sync delivers everything that was seen.
    @Test func aClientCutOffFromTheServerWorksOfflineAndSyncsLater() throws {
        let server = try LoyaltyServerProcess()
        defer { server.stop() }
        let phone = try server.shopperWithCatalog(retailerUUID: uuid, offers: 3)
        let walk = try server.walk(uuid: uuid, minors: [1, 2, 3])
        let unreachable = ["LOYALTY_SERVER": "http://127.0.0.1:\(try LoopbackSocket.freePort())"]
        // The phone's server, unreachable: its token is bound to that address while the network is cut.
        let moveTo = { (url: String) in
            try #require(
                try loyalty.run(["config", "set", "server", url, "--move-credentials"], environment: phone).status == 0)
        }
        try moveTo(unreachable["LOYALTY_SERVER"]!)

        let scan = try loyalty.run(
            ["scan", "--replay", walk, "--json"], environment: phone.merging(unreachable) { $1 })
        #expect(scan.status == 0, "\(scan.stderr)")
        #expect(offerIDs(scan).count == 3)
        let offline = try loyalty.run(["sync", "--json"], environment: phone.merging(unreachable) { $1 })
        #expect(offline.status == 75 && offline.stderr.contains("could not connect"), "\(offline.stderr)")
        try moveTo(phone["LOYALTY_SERVER"]!)

        let online = try loyalty.run(["sync", "--json"], environment: phone)
        #expect(online.jsonLines.first?["pushed"] as? Int == 3, "\(online.stdout) \(online.stderr)")
        let again = try loyalty.run(["sync", "--json"], environment: phone)
        #expect(again.jsonLines.first?["pushed"] as? Int == 0)
    }

    /// `loyalty scan` SIGKILLed part-way, then run again: every offer of the walk is shown over the runs, none
    /// twice unless the kill fell between its line and the scan's record of it (then its line is the last the
    /// killed scan printed), and the next sync sends each once.
    @Test func aScanKilledPartWayLosesNothingAndRepeatsOnlyWhatTheKillCut() throws {
        let server = try LoyaltyServerProcess()
        defer { server.stop() }
        let phone = try server.shopperWithCatalog(retailerUUID: uuid, offers: 20)
        let walk = try server.walk(uuid: uuid, minors: Array(1...20))
        var shown: [String] = []
        var cutAfter: [String] = []
        var killed = 0
        // Each kill lands mid-way: right after the scan printed that many more offers, while it goes on.
        for offers in [1, 4, 2] {
            let (output, wasRunning) = try loyalty.runKilled(
                after: { self.offerIDs($0).count >= offers }, ["scan", "--replay", walk, "--json", "--offline"],
                environment: phone)
            shown += offerIDs(output)
            killed += wasRunning ? 1 : 0
            if wasRunning, let last = offerIDs(output).last { cutAfter.append(last) }
        }
        let last = try loyalty.run(["scan", "--replay", walk, "--json", "--offline"], environment: phone)
        shown += offerIDs(last)
        #expect(killed == 3, "a scan ended before its kill: the walk is too short to test this")
        let again = Set(shown.filter { offer in shown.count { $0 == offer } > 1 })
        let unexplained = again.filter { offer in shown.count { $0 == offer } - 1 > cutAfter.count { $0 == offer } }
        #expect(Set(shown).count == 20 && unexplained.isEmpty, "\(shown.count) shown, \(Set(shown).count) distinct: \(shown)")
        let sync = try loyalty.run(["sync", "--json"], environment: phone)
        #expect(sync.jsonLines.first?["pushed"] as? Int == 20, "\(sync.stdout) \(sync.stderr)")
    }

    /// A kill between an offer's claim (recorded as seen, in the outbox) and its line: strace SIGKILLs the scan
    /// as it enters its first write(2) to standard output (a file, which `-P` traces alone), the one that comes
    /// with the first offer (the range lines before it wait in the output buffer). The next scan shows that
    /// offer, and the outbox holds each offer once.
    @Test func anOfferClaimedButKilledBeforeItsLineShowsInTheNextScan() throws {
        let server = try LoyaltyServerProcess()
        defer { server.stop() }
        let phone = try server.shopperWithCatalog(retailerUUID: uuid, offers: 3)
        let walk = try server.walk(uuid: uuid, minors: [1, 2, 3])
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("claimed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        _ = try Binary(at: "sh").run(
            [
                "-c", "exec strace -f -qq -o /dev/null -P \"$0\" -e trace=write -e inject=write:signal=KILL:when=1 "
                    + "\"$1\" scan --replay \"$2\" --json --offline > \"$0\"", output.path, loyalty.url.path, walk,
            ], environment: phone)
        let killed = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        #expect(offerIDs(killed).isEmpty && killed.isEmpty, "the kill came after a write: \(killed.suffix(500))")
        let next = try loyalty.run(["scan", "--replay", walk, "--json", "--offline"], environment: phone)
        #expect(offerIDs(next) == ["1/1", "1/2", "1/3"], "\(next.stdout.suffix(2000)) \(next.stderr)")
        let sync = try loyalty.run(["sync", "--json"], environment: phone)
        #expect(sync.jsonLines.first?["pushed"] as? Int == 3, "\(sync.stdout) \(sync.stderr)")
    }

    /// The server SIGKILLed after answering a redemption: restarted on the same data, it still has it (a
    /// second redemption of a once-per-shopper offer is refused), and it serves again at once.
    @Test func aRedemptionAnsweredBeforeTheServerIsKilledIsStillThere() throws {
        let server = try LoyaltyServerProcess()
        defer { server.stop() }
        let phone = try server.shopperWithCatalog(retailerUUID: uuid, offers: 1)
        let visit = try loyalty.run(["scan", "--replay", try server.walk(uuid: uuid, minors: [1])], environment: phone)
        #expect(visit.status == 0, "\(visit.stderr)")
        let first = try loyalty.run(["redeem", "\(uuid):1:1", "--json"], environment: phone)
        #expect(first.status == 0, "\(first.stderr)")
        let code = first.jsonLines.first?["code"] as? String
        #expect(code != nil)

        try server.killAndRestart()
        let history = try loyalty.run(["history", "--json"], environment: phone)
        #expect(history.stdout.contains(code ?? "-"))
        let second = try loyalty.run(["redeem", "\(uuid):1:1"], environment: phone)
        #expect(second.status != 0 && second.stderr.contains("limit"), "\(second.stdout) \(second.stderr)")
    }

    /// PostgreSQL stopped under the running server: a sync is refused with the server's 503 (the client says
    /// so and keeps its outbox), the server keeps running, and once PostgreSQL is back the same server
    /// delivers everything without a restart.
    @Test func aServerWhoseDatabaseStopsAnswers503AndRecoversByItself() throws {
        let server = try LoyaltyServerProcess()
        defer { server.stop() }
        let phone = try server.shopperWithCatalog(retailerUUID: uuid, offers: 2)
        let walk = try server.walk(uuid: uuid, minors: [1, 2])
        #expect(try loyalty.run(["scan", "--replay", walk, "--json", "--offline"], environment: phone).status == 0)

        try server.postgres("stop", "-m", "fast")
        let refused = try loyalty.run(["sync", "--json"], environment: phone)
        #expect(refused.status != 0 && refused.stderr.contains("database"), "\(refused.stderr)")
        #expect(server.isRunning)

        try server.postgres("start")
        let delivered = try loyalty.run(["sync", "--json"], environment: phone)
        #expect(delivered.jsonLines.first?["pushed"] as? Int == 2, "\(delivered.stdout) \(delivered.stderr)")
    }

    private func offerIDs(_ result: Binary.Result) -> [String] { offerIDs(result.stdout) }

    private func offerIDs(_ output: String) -> [String] {
        output.split(separator: "\n").compactMap { line in
            guard let event = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                event["event"] as? String == "offer", let offer = event["offer"] as? [String: Any]
            else { return nil }
            return "\(offer["major"] ?? "")/\(offer["minor"] ?? "")"
        }
    }
}

extension Binary {
    /// Starts the program, SIGKILLs it once its standard output so far satisfies `due` (or it ended); that
    /// output, and whether it was still running when killed.
    func runKilled(after due: (String) -> Bool, _ arguments: [String], environment: [String: String]) throws -> (
        String, Bool
    ) {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("killed-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        while process.isRunning, !due((try? String(contentsOf: output, encoding: .utf8)) ?? "") { usleep(1_000) }
        let wasRunning = process.isRunning
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return ((try? String(contentsOf: output, encoding: .utf8)) ?? "", wasRunning)
    }
}
