import Foundation
import LoyaltyTesting
import Testing

/// The one parser's rules, in process and through the built program: declared words only, global options on
/// either side of the command, usage errors with the command's usage line.
@Suite struct UsageTests {
    static let clientOptions =
        "[--server URL] [--connect-timeout SECONDS] [--timeout SECONDS] [--ca-file PEM] [--insecure-http] [--json]"

    /// Exit code 64, the message, and the usage line of `path`.
    func expectUsageError(_ run: LoyaltyRun, _ arguments: [String], _ message: String, usage: String) throws {
        let result = try run(arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stdout.isEmpty, "\(arguments)")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first == "error: \(message)", "\(arguments): \(result.stderr)")
        #expect(lines.count == 3 && lines[1].hasPrefix("USAGE: \(usage)"), "\(arguments): \(result.stderr)")
    }

    @Test(arguments: LoyaltyRun.allCases) func extraWordsAreUsageErrors(_ run: LoyaltyRun) throws {
        try expectUsageError(run, ["sync", "extra-word"], "unexpected argument 'extra-word'", usage: "loyalty sync [--full]")
        try expectUsageError(
            run, ["retailer", "offers", "extra", "x.csv"], "unexpected argument 'extra'", usage: "loyalty retailer offers")
        try expectUsageError(
            run, ["retailer", "offers", "import", "a.csv", "b.csv"], "unexpected argument 'b.csv'",
            usage: "loyalty retailer offers import")
        try expectUsageError(run, ["retailer", "import"], "unknown command 'import'", usage: "loyalty retailer <command>")
        try expectUsageError(run, ["redeem", "a", "b"], "unexpected argument 'b'", usage: "loyalty redeem [--qr] \(Self.clientOptions) OFFER")
        try expectUsageError(run, ["redeem"], "missing OFFER", usage: "loyalty redeem [--qr] \(Self.clientOptions) OFFER")
        try expectUsageError(
            run, ["retailer", "offer", "rm", "1"], "missing MINOR",
            usage: "loyalty retailer offer rm \(Self.clientOptions) MAJOR MINOR")
        try expectUsageError(run, ["devices", "revoke"], "missing ID", usage: "loyalty devices revoke [--yes] \(Self.clientOptions) ID")
        try expectUsageError(run, ["history", "--bogus"], "unknown option '--bogus'", usage: "loyalty history")
        try expectUsageError(
            run, ["decode", "--bogus", "00"], "unknown option '--bogus'", usage: "loyalty decode [--hci] [--json] HEX...")
    }

    @Test(arguments: LoyaltyRun.allCases) func globalOptionsComeBeforeOrAfterTheCommand(_ run: LoyaltyRun) throws {
        let capture = fixturesDirectory.appendingPathComponent("btsnooper-extended-ibeacons.btsnoop").path
        let after = try run(["scan", "--replay", capture, "--json", "--offline"])
        let before = try run(["--json", "scan", "--replay", capture, "--offline"])
        #expect(after.status == 0 && before.status == 0, "\(before.stderr)")
        #expect(!before.jsonLines.isEmpty && before.stdout == after.stdout)

        let home = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-usage-\(UUID())")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["LOYALTY_HOME": home.path]
        let offers = try run(["--json", "--server", "http://127.0.0.1:9", "offers"], environment: environment)
        #expect(offers.status == 0 && offers.stderr.isEmpty, "\(offers.stderr)")
        // Without a device, `account show` fails the same way whichever side --json is on.
        let show = try run(["--json", "account", "show"], environment: environment)
        let showAfter = try run(["account", "show", "--json"], environment: environment)
        #expect(show.status == 1 && show.stderr == showAfter.stderr && !show.stderr.isEmpty)
    }

    @Test(arguments: LoyaltyRun.allCases) func badValuesAndMistypedCommandsAreUsageErrorsBeforeAnythingRuns(_ run: LoyaltyRun) throws {
        try expectUsageError(
            run, ["retailer", "register", "--name", "M", "--uuid", "nope"], "--uuid: not a UUID; expected 8-4-4-4-12 hex digits",
            usage: "loyalty retailer register --name NAME [--uuid UUID]")
        try expectUsageError(
            run, ["scan", "--replay", "/nonexistent", "--min-proximity", "close"], "--min-proximity: expected immediate, near or far",
            usage: "loyalty scan [--replay FILE]")
        try expectUsageError(run, ["scna"], "unknown command 'scna'; did you mean 'scan'?", usage: "loyalty <command>")
    }

    @Test(arguments: LoyaltyRun.allCases) func helpIsAFlagOnly(_ run: LoyaltyRun) throws {
        // After --, "--help" is a word: here not hex, so a data error, not the help text.
        let decoded = try run(["decode", "--", "--help"])
        #expect(decoded.status == 65 && decoded.stdout.isEmpty, "\(decoded.stdout)")
        let help = try run(["retailer", "offer", "set", "--help"])
        #expect(help.status == 0 && help.stdout.contains("USAGE: loyalty retailer offer set --title TEXT [--description TEXT]"))
        #expect(help.stdout.contains("[--reshow-after SECONDS] [--schedule HOURS] [--shows-per-day N] \(Self.clientOptions) MAJOR MINOR\n"))
    }
}
