import Foundation
import LoyaltyTesting
import Testing

/// What the commands that need no server print, in process and through the built program alike: text
/// without --json and JSON lines with it, in a pipe as on a terminal (the README's one rule).
@Suite struct CommandOutputTests {
    static let beacon = "0201061aff4c0002158f0c1ddc11e54a078910425941b072f900010001c5"
    let capture = fixturesDirectory.appendingPathComponent("btsnooper-extended-ibeacons.btsnoop").path

    /// A home of its own for one run, removed after it.
    func withHome<T>(_ body: ([String: String]) throws -> T) rethrows -> T {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-output-\(UUID())")
        defer { try? FileManager.default.removeItem(at: home) }
        return try body(["LOYALTY_HOME": home.path])
    }

    @Test(arguments: LoyaltyRun.allCases) func decodePrintsOneJSONLinePerBeacon(_ run: LoyaltyRun) throws {
        let result = try run(["decode", Self.beacon])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        #expect(
            result.stdout
                == #"{"kind":"ibeacon","uuid":"8F0C1DDC-11E5-4A07-8910-425941B072F9","major":1,"minor":1,"tx_power":-59}"#
                + "\n")
    }

    @Test(arguments: LoyaltyRun.allCases) func anEmptyCacheSaysWhatToDoInTextAndNothingInJSON(_ run: LoyaltyRun) throws {
        try withHome { home in
            let offers = try run(["offers"], environment: home)
            #expect(offers.status == 0 && offers.stdout == "no offers cached: run `loyalty sync`\n", "\(offers.stderr)")
            let history = try run(["history"], environment: home)
            #expect(history.status == 0 && history.stdout == "nothing seen or redeemed yet\n", "\(history.stderr)")
            for command in [["offers", "--json"], ["history", "--json"], ["--json", "offers"]] {
                let json = try run(command, environment: home)
                #expect(json.status == 0 && json.stdout.isEmpty, "\(command): \(json.stdout) \(json.stderr)")
            }
            let account = try run(["account", "show"], environment: home)
            #expect(account.status == 1 && account.stdout.isEmpty && account.stderr.hasPrefix("error: "))
        }
    }

    /// The rule: a pipe gets text unless --json asks for JSON lines. A replay's text is its event log
    /// (the live table is for a terminal), its summary on standard error.
    @Test(arguments: LoyaltyRun.allCases) func aScanInAPipeIsTextWithoutJSONAndJSONLinesWithIt(_ run: LoyaltyRun) throws {
        try withHome { home in
            let text = try run(["scan", "--replay", capture, "--offline"], environment: home)
            #expect(text.status == 0, "\(text.stderr)")
            #expect(text.jsonLines.isEmpty && !text.stdout.isEmpty, "\(text.stdout)")
            #expect(text.stdout.split(separator: "\n").allSatisfy { $0.contains("  entered ") || $0.contains("  left ") })
            #expect(text.stderr.contains("advertising reports"), "\(text.stderr)")

            let json = try run(["scan", "--replay", capture, "--offline", "--json"], environment: home)
            #expect(json.status == 0, "\(json.stderr)")
            let events = json.jsonLines.compactMap { $0["event"] as? String }
            #expect(events.contains("enter") && events.contains("range") && events.last == "summary")
            #expect(json.jsonLines.count == json.stdout.split(separator: "\n").count)
            // The same regions entered, said as text and as JSON.
            #expect(text.stdout.components(separatedBy: "  entered ").count - 1 == events.filter { $0 == "enter" }.count)
        }
    }

    @Test(arguments: LoyaltyRun.allCases) func simulateAndAdvertiseSayWhatTheyWrote(_ run: LoyaltyRun) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-output-\(UUID()).btsnoop")
        defer { try? FileManager.default.removeItem(at: file) }
        let walk = "8F0C1DDC-11E5-4A07-8910-425941B072F9:1:1@0=12,10=1"
        let text = try run(["beacon", "simulate", "--walk", walk, "--write", file.path])
        #expect(text.status == 0 && text.stdout.hasPrefix("wrote \(file.path)"), "\(text.stdout) \(text.stderr)")
        let json = try run(["beacon", "simulate", "--walk", walk, "--write", file.path, "--json"])
        #expect(json.status == 0 && json.jsonLines.count == 1, "\(json.stdout)")
        #expect(json.jsonLines.first?["file"] as? String == file.path)

        let beacon = ["--uuid", "8F0C1DDC-11E5-4A07-8910-425941B072F9", "--major", "1", "--minor", "2", "--dry-run"]
        let dryRun = try run(["beacon", "advertise"] + beacon)
        #expect(dryRun.status == 0 && dryRun.jsonLines.isEmpty && dryRun.stdout.contains("LE Set Advertising Data"))
        let dryRunJSON = try run(["beacon", "advertise", "--json"] + beacon)
        // Each command's name and bytes: two lines of text, one JSON line.
        #expect(dryRunJSON.status == 0 && dryRunJSON.jsonLines.count * 2 == dryRun.stdout.split(separator: "\n").count)
    }

    @Test(arguments: LoyaltyRun.allCases) func exitCodesOfCommandsThatNeedNoServer(_ run: LoyaltyRun) throws {
        let notACapture = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-output-\(UUID()).txt")
        try Data("hello\n".utf8).write(to: notACapture)
        defer { try? FileManager.default.removeItem(at: notACapture) }
        let beacon = "8F0C1DDC-11E5-4A07-8910-425941B072F9:1:1"
        let cases: [([String], Int32)] = [
            (["scan", "--replay", "/nonexistent/walk.btsnoop"], 74),
            (["scan", "--replay", notACapture.path, "--json"], 65),
            (["beacon", "calibrate", beacon, "--replay", "/nonexistent/walk.btsnoop"], 74),
            (["beacon", "calibrate", beacon, "--replay", notACapture.path], 65),
            (["decode", "0201"], 65),
            (["sync", "--server", "notaurl"], 64),
            (["redeem", "garbage"], 64),
            (["--version"], 0),
        ]
        for (arguments, status) in cases {
            let result = try run(arguments)
            #expect(result.status == status, "loyalty \(arguments.joined(separator: " ")): \(result.status) \(result.stderr)")
            if status != 0 { #expect(result.stderr.hasPrefix("error: "), "\(arguments): \(result.stderr)") }
        }
    }
}

/// The commands that talk to the server, against a real one over loopback, in process and through the built
/// program: each says what it did as text, and as JSON lines with --json.
@Suite struct ServerCommandOutputTests {
    @Test(arguments: LoyaltyRun.allCases) func eachCommandPrintsTextOrJSONLines(_ run: LoyaltyRun) throws {
        let server = try TestServer(.socket, clock: .machine())
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-commands-\(UUID())")
        defer { try? FileManager.default.removeItem(at: work) }
        // Two of everything, one story told in text and one in JSON lines, on the same server.
        for format in ["text", "json"] {
            let retailer = [
                "LOYALTY_HOME": work.appendingPathComponent("retailer-\(format)").path, "LOYALTY_SERVER": server.baseURL,
                "LOYALTY_ADMIN_TOKEN": server.operatorToken,
            ]
            let shopper = [
                "LOYALTY_HOME": work.appendingPathComponent("shopper-\(format)").path, "LOYALTY_SERVER": server.baseURL,
            ]
            let name = "Arcade \(format)"
            let steps: [(arguments: [String], environment: [String: String], says: String)] = [
                (["retailer", "register", "--name", name, "--uuid", UUID().uuidString], retailer, name),
                (["retailer", "offer", "set", "1", "1", "--title", "First sushi"], retailer, "First sushi"),
                (["retailer", "offers"], retailer, "First sushi"),
                (
                    ["retailer", "store", "set", "carnaby", "--name", "Carnaby", "--lat", "51.5", "--lon", "-0.14",
                     "--radius-m", "50"], retailer, "Carnaby"
                ),
                (["retailer", "store", "list"], retailer, "Carnaby"),
                (["retailer", "till-key", "create", "--name", "front desk"], retailer, "lt_"),
                (["retailer", "till-key", "list"], retailer, "front desk"),
                (["account", "create", "--name", "phone"], shopper, "account"),
                (["sync"], shopper, format == "json" ? "\"event\":\"synced\"" : "1 offer"),
                (["offers"], shopper, "First sushi"),
                (["devices"], shopper, "phone"),
            ]
            for step in steps {
                let result = try run(step.arguments + (format == "json" ? ["--json"] : []), environment: step.environment)
                let command = "loyalty \(step.arguments.joined(separator: " ")) (\(format))"
                #expect(result.status == 0, "\(command): \(result.stderr)")
                #expect(result.stdout.contains(step.says), "\(command): \(result.stdout)")
                let lines = result.stdout.split(separator: "\n")
                if format == "json" {
                    #expect(!lines.isEmpty && result.jsonLines.count == lines.count, "\(command): \(result.stdout)")
                } else {
                    #expect(result.jsonLines.isEmpty, "\(command): \(result.stdout)")
                }
            }
        }
    }
}
