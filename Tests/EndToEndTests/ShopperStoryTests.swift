import Foundation
import LoyaltyTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The shopper's and the retailer's stories through the real binaries: one `loyalty-server` on its own
/// embedded PostgreSQL, shared by the suite, and `loyalty` devices, each with its own LOYALTY_HOME.
@Suite struct ShopperStoryTests {
    static let matey = "8F0C1DDC-11E5-4A07-8910-425941B072F9"

    @Test func mateysDemoStory() throws {
        let server = try StoryServer.shared.get()
        let store = try server.retailer("Matey's", uuid: Self.matey)
        try store.setOffer(1, 1, "30% off sushi at The Japanese Kitchen", ["--category", "food"])
        try store.setOffer(1, 2, "Buy one get one free at Tucci's Pizza", ["--category", "food"])
        try store.setOffer(2, 1, "50% off all ladies' clothing", ["--category", "clothing"])
        let phone = try server.newAccount()
        let tablet = try phone.linkedDevice()
        let walk = try server.walk([
            "\(Self.matey):1:1@0=15,8=1,16=1,24=15,70=15",
            "\(Self.matey):1:2@0=20,24=20,32=1.2,40=1.2,48=20,70=20",
            "\(Self.matey):2:1@0=25,48=25,56=0.8,64=0.8,70=25",
        ])

        try phone.ok(["sync"])
        let shown = try phone.scan(walk)
        #expect(
            shown.map(\.title) == [
                "30% off sushi at The Japanese Kitchen", "Buy one get one free at Tucci's Pizza",
                "50% off all ladies' clothing",
            ])
        // One at a time: each offer is shown for the dwell (5 s of capture time) before the next.
        for (earlier, later) in zip(shown, shown.dropFirst()) {
            #expect(later.time - earlier.time >= 5)
        }

        let redeemed = try phone.ok(["redeem", "\(Self.matey):1:1", "--json"]).jsonLines
        #expect((redeemed.first?["code"] as? String)?.isEmpty == false)

        try phone.ok(["sync"])
        try tablet.ok(["sync"])
        #expect(try tablet.scan(walk).isEmpty)
        let stats = try store.statistics()
        #expect(stats.map(\.seenBy) == [1, 1, 1])
        #expect(stats.map(\.redemptions) == [1, 0, 0])
    }

    @Test func offerOutsideItsValidityWindowIsNotShown() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Window shop", uuid: uuid)
        try store.setOffer(
            1, 1, "Ended long ago",
            ["--starts", "2000-01-01T00:00:00Z", "--ends", "2000-01-02T00:00:00Z"])
        try store.setOffer(1, 2, "Not started yet", ["--starts", "2999-01-01T00:00:00Z"])
        try store.setOffer(1, 3, "Running now", [])
        let shopper = try server.newAccount()
        try shopper.ok(["sync"])
        let walk = try server.walk([
            "\(uuid):1:1@0=1,30=1", "\(uuid):1:2@0=1,30=1", "\(uuid):1:3@0=1,30=1",
        ])
        #expect(try shopper.scan(walk).map(\.title) == ["Running now"])
    }

    @Test func reshowAfterShowsTheOfferAgain() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Bakery", uuid: uuid)
        try store.setOffer(1, 1, "Fresh bread", ["--reshow-after", "20"])
        try store.setOffer(1, 2, "Once only", [])
        let shopper = try server.newAccount()
        try shopper.ok(["sync"])
        // Near both at 0-10 s and again at 40-50 s; away in between.
        let passes = "@0=1,10=1,12=20,38=20,40=1,50=1,60=20"
        let shown = try shopper.scan(try server.walk(["\(uuid):1:1\(passes)", "\(uuid):1:2\(passes)"]))
        #expect(shown.filter { $0.title == "Fresh bread" }.count == 2)
        #expect(shown.filter { $0.title == "Once only" }.count == 1)
    }

    @Test func removedOfferDisappearsAfterSync() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Closing down", uuid: uuid)
        try store.setOffer(3, 7, "Everything must go", [])
        let shopper = try server.newAccount()
        try shopper.ok(["sync"])
        #expect(try shopper.cachedTitles().contains("Everything must go"))

        try store.ok(["retailer", "offer", "rm", "3", "7"])
        try shopper.ok(["sync"])
        #expect(!(try shopper.cachedTitles().contains("Everything must go")))
        #expect(try shopper.scan(try server.walk(["\(uuid):3:7@0=1,20=1"])).isEmpty)
    }

    @Test func twoDevicesSeeingOneOfferRecordOneSeenEntry() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Busy shop", uuid: uuid)
        try store.setOffer(1, 1, "Two for one", [])
        let phone = try server.newAccount()
        let tablet = try phone.linkedDevice()
        try phone.ok(["sync"])
        try tablet.ok(["sync"])
        // Both are shown the offer before either tells the server.
        let walk = try server.walk(["\(uuid):1:1@0=1,20=1"])
        #expect(try phone.scan(walk, ["--offline"]).count == 1)
        #expect(try tablet.scan(walk, ["--offline"]).count == 1)
        #expect(try phone.syncReport()["pushed"] as? Int == 1)
        #expect(try tablet.syncReport()["pushed"] as? Int == 1)
        try phone.ok(["sync"])

        #expect(try store.statistics().map(\.seenBy) == [1])
        for device in [phone, tablet] {
            let seen = try device.ok(["history", "--json"]).jsonLines.filter {
                $0["event"] as? String == "seen"
            }
            #expect(seen.map { $0["title"] as? String } == ["Two for one"])
        }
    }

    @Test func outboxSurvivesAKilledScan() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Night market", uuid: uuid)
        try store.setOffer(5, 5, "Late deal", [])
        let shopper = try server.newAccount()
        try shopper.ok(["sync"])
        // Paced by the capture's clock, so the scan is still running when it is killed.
        let walk = try server.walk(["\(uuid):5:5@0=1,120=1"])
        try shopper.killScanAfterFirstOffer(walk)

        #expect(try shopper.syncReport()["pushed"] as? Int == 1)
        #expect(try shopper.syncReport()["pushed"] as? Int == 0)
        #expect(try store.statistics().map(\.seenBy) == [1])
    }

    @Test func revokedDeviceIsRefusedWithExit77() throws {
        let server = try StoryServer.shared.get()
        let phone = try server.newAccount()
        let tablet = try phone.linkedDevice()
        let devices = try phone.ok(["devices", "--json"]).jsonLines
        let tabletID = try #require(devices.first { $0["current"] as? Bool == false }?["id"] as? String)
        try phone.ok(["devices", "revoke", tabletID])

        let refused = try tablet.run(["sync"])
        #expect(refused.status == 77)
        #expect(refused.stderr.lowercased().contains("revoked"))
        try phone.ok(["sync"])
    }
}

/// A `loyalty-server` with its data in a temporary directory, stopped (SIGTERM, then waited for) when
/// the test process exits.
final class StoryServer: @unchecked Sendable {  // immutable after init
    static let shared: Result<StoryServer, any Error> = {
        Result {
            let server = try StoryServer()
            atexit { if case .success(let server) = StoryServer.shared { server.stop() } }
            return server
        }
    }()

    let url: String
    let operatorToken = "story-" + UUID().uuidString
    let work: URL
    private let process = Process()

    private init() throws {
        work = try ThrowawayDirectory.make("loyalty-story", postgresMayEnter: true)
        process.executableURL = Binary("loyalty-server").url
        process.arguments = [
            "--listen", "127.0.0.1:0", "--data-dir", work.appendingPathComponent("server").path,
            // Every story's accounts and failed tokens come from 127.0.0.1; the limits have tests of their own.
            "--no-rate-limits",
        ]
        process.environment = ProcessInfo.processInfo.environment.merging([
            "LOYALTY_ADMIN_TOKEN": operatorToken
        ]) {
            $1
        }
        let out = Pipe()
        process.standardOutput = out
        let log = work.appendingPathComponent("server.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        var announced = ""
        while !announced.contains("\n") {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw StoryFailure("loyalty-server exited: see \(log.path)") }
            announced += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = announced.range(of: "http://[^\\s]+", options: .regularExpression) else {
            throw StoryFailure("loyalty-server said: \(announced)")
        }
        url = String(announced[range])
    }

    func stop() {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: work)
    }

    /// A device (or the retailer's workstation) with a home of its own.
    func device() -> StoryDevice {
        StoryDevice(server: self, home: work.appendingPathComponent("device-\(UUID().uuidString)"))
    }

    func retailer(_ name: String, uuid: String) throws -> StoryDevice {
        let retailer = device()
        try retailer.ok(
            ["retailer", "register", "--name", name, "--uuid", uuid],
            ["LOYALTY_ADMIN_TOKEN": operatorToken])
        return retailer
    }

    func newAccount() throws -> StoryDevice {
        let shopper = device()
        try shopper.ok(["account", "create"])
        return shopper
    }

    /// A capture of a walk past beacons, `UUID:MAJOR:MINOR@t=metres,...` each.
    func walk(_ beacons: [String]) throws -> URL {
        let file = work.appendingPathComponent("walk-\(UUID().uuidString).btsnoop")
        try device().ok(
            ["beacon", "simulate", "--write", file.path] + beacons.flatMap { ["--walk", $0] })
        return file
    }
}

struct StoryDevice {
    let server: StoryServer
    let home: URL

    struct Shown {
        var title: String
        var time: Double
    }

    func run(_ arguments: [String], _ environment: [String: String] = [:]) throws -> Binary.Result {
        try Binary("loyalty").run(
            arguments,
            environment: ["LOYALTY_HOME": home.path, "LOYALTY_SERVER": server.url].merging(environment) {
                $1
            })
    }

    @discardableResult
    func ok(_ arguments: [String], _ environment: [String: String] = [:]) throws -> Binary.Result {
        let result = try run(arguments, environment)
        guard result.status == 0 else {
            throw StoryFailure(
                "loyalty \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)")
        }
        return result
    }

    func setOffer(_ major: Int, _ minor: Int, _ title: String, _ options: [String]) throws {
        try ok(["retailer", "offer", "set", "\(major)", "\(minor)", "--title", title] + options)
    }

    /// The retailer's figures, in beacon order.
    func statistics() throws -> [(seenBy: Int, redemptions: Int)] {
        try ok(["retailer", "stats", "--json"]).jsonLines.map { line in
            (line["seen_by"] as? Int ?? -1, line["redemptions"] as? Int ?? -1)
        }
    }

    /// A second device of this account, linked with a code from this one, typed the way a person might:
    /// `K7M2-Q9XP-4HTD` as `k7m2 q9xp 4htd` (three arguments).
    func linkedDevice() throws -> StoryDevice {
        let code = try #require(
            try ok(["account", "link", "--json"]).jsonLines.first?["code"] as? String)
        let other = server.device()
        let typed = code.lowercased().split(separator: "-").map(String.init)
        try #require(typed.count == 3, "\(code)")
        try other.ok(["account", "link"] + typed + ["--name", "second"])
        return other
    }

    /// Walks up to the beacons `UUID:1:MINOR`, one after the other, near each for 4 s, and syncs: the account has
    /// seen their offers, as a shopper in the shop has, and may redeem them.
    func visit(_ uuid: String, minors: [Int]) throws {
        let end = 8 * minors.count + 8
        let walk = try server.walk(
            minors.enumerated().map { index, minor in
                let t = 8 * index + 2
                return "\(uuid):1:\(minor)@0=20,\(t)=20,\(t + 1)=1,\(t + 5)=1,\(t + 6)=20,\(end)=20"
            })
        try ok(["scan", "--replay", walk.path, "--json"])
        try ok(["sync"])
    }

    /// The offers a replay of `walk` showed, in order.
    func scan(_ walk: URL, _ options: [String] = []) throws -> [Shown] {
        try ok(["scan", "--replay", walk.path, "--json"] + options).jsonLines.compactMap { line in
            guard line["event"] as? String == "offer", let offer = line["offer"] as? [String: Any],
                let title = offer["title"] as? String, let time = line["t"] as? Double
            else { return nil }
            return Shown(title: title, time: time)
        }
    }

    func syncReport() throws -> [String: Any] {
        try #require(try ok(["sync", "--json"]).jsonLines.first { $0["event"] as? String == "synced" })
    }

    func cachedTitles() throws -> [String] {
        try ok(["offers", "--json"]).jsonLines.compactMap { $0["title"] as? String }
    }

    /// Runs an offline scan paced in real time and SIGKILLs it as soon as it printed an offer line.
    func killScanAfterFirstOffer(_ walk: URL) throws {
        let process = Process()
        process.executableURL = Binary("loyalty").url
        process.arguments = ["scan", "--replay", walk.path, "--json", "--realtime", "--offline"]
        process.environment = ProcessInfo.processInfo.environment.merging(
            ["LOYALTY_HOME": home.path, "LOYALTY_SERVER": server.url]) { $1 }
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var printed = ""
        while !printed.contains("\"event\":\"offer\"") {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            printed += String(decoding: chunk, as: UTF8.self)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(printed.contains("\"event\":\"offer\""))
        #expect(process.terminationReason == .uncaughtSignal)
    }
}

struct StoryFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
