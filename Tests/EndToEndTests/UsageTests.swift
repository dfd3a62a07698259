import Foundation
import Testing

/// The one parser's rules, through the built programs: declared words only, global options on either side
/// of the command, usage errors with the command's usage line.
@Suite struct UsageTests {
    let loyalty = Binary("loyalty")
    let server = Binary("loyalty-server")
    static let clientOptions = "[--server URL] [--connect-timeout SECONDS] [--timeout SECONDS] [--json]"

    /// Exit code 64, the message, and the usage line of `path`.
    func expectUsageError(_ arguments: [String], _ message: String, usage: String, of binary: Binary? = nil) throws {
        let result = try (binary ?? loyalty).run(arguments)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stdout.isEmpty, "\(arguments)")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.first == "error: \(message)", "\(arguments): \(result.stderr)")
        #expect(lines.count == 3 && lines[1].hasPrefix("USAGE: \(usage)"), "\(arguments): \(result.stderr)")
    }

    @Test func extraWordsAreUsageErrors() throws {
        try expectUsageError(["sync", "extra-word"], "unexpected argument 'extra-word'", usage: "loyalty sync [--full]")
        try expectUsageError(
            ["retailer", "offers", "extra", "x.csv"], "unexpected argument 'extra'", usage: "loyalty retailer offers")
        try expectUsageError(
            ["retailer", "offers", "import", "a.csv", "b.csv"], "unexpected argument 'b.csv'",
            usage: "loyalty retailer offers import")
        try expectUsageError(["retailer", "import"], "unknown command 'import'", usage: "loyalty retailer <command>")
        try expectUsageError(["redeem", "a", "b"], "unexpected argument 'b'", usage: "loyalty redeem [--qr] \(Self.clientOptions) OFFER")
        try expectUsageError(["redeem"], "missing OFFER", usage: "loyalty redeem [--qr] \(Self.clientOptions) OFFER")
        try expectUsageError(
            ["retailer", "offer", "rm", "1"], "missing MINOR",
            usage: "loyalty retailer offer rm \(Self.clientOptions) MAJOR MINOR")
        try expectUsageError(["devices", "revoke"], "missing ID", usage: "loyalty devices revoke [--yes] \(Self.clientOptions) ID")
        try expectUsageError(["history", "--bogus"], "unknown option '--bogus'", usage: "loyalty history")
        try expectUsageError(
            ["decode", "--bogus", "00"], "unknown option '--bogus'", usage: "loyalty decode [--hci] [--json] HEX...")
        try expectUsageError(
            ["extra-word"], "unexpected argument 'extra-word'", usage: "loyalty-server [<command>] [--listen", of: server)
    }

    @Test func globalOptionsComeBeforeOrAfterTheCommand() throws {
        let capture = fixturesDirectory.appendingPathComponent("btsnooper-extended-ibeacons.btsnoop").path
        let after = try loyalty.run(["scan", "--replay", capture, "--json", "--offline"])
        let before = try loyalty.run(["--json", "scan", "--replay", capture, "--offline"])
        #expect(after.status == 0 && before.status == 0, "\(before.stderr)")
        #expect(!before.jsonLines.isEmpty && before.stdout == after.stdout)

        let home = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-usage-\(UUID())")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["LOYALTY_HOME": home.path]
        let offers = try loyalty.run(["--json", "--server", "http://127.0.0.1:9", "offers"], environment: environment)
        #expect(offers.status == 0 && offers.stderr.isEmpty, "\(offers.stderr)")
        // Without a device, `account show` fails the same way whichever side --json is on.
        let show = try loyalty.run(["--json", "account", "show"], environment: environment)
        let showAfter = try loyalty.run(["account", "show", "--json"], environment: environment)
        #expect(show.status == 1 && show.stderr == showAfter.stderr && !show.stderr.isEmpty)
        #expect(try server.run(["--data-dir", home.path, "migrate", "--help"]).stdout.contains("USAGE: loyalty-server migrate"))
    }

    @Test func badValuesAndMistypedCommandsAreUsageErrorsBeforeAnythingRuns() throws {
        try expectUsageError(
            ["retailer", "register", "--name", "M", "--uuid", "nope"], "--uuid: not a UUID; expected 8-4-4-4-12 hex digits",
            usage: "loyalty retailer register --name NAME [--uuid UUID]")
        try expectUsageError(
            ["scan", "--replay", "/nonexistent", "--min-proximity", "close"], "--min-proximity: expected immediate, near or far",
            usage: "loyalty scan [--replay FILE]")
        try expectUsageError(["scna"], "unknown command 'scna'; did you mean 'scan'?", usage: "loyalty <command>")
    }

    @Test func helpIsAFlagOnly() throws {
        // After --, "--help" is a word: here not hex, so a data error, not the help text.
        let decoded = try loyalty.run(["decode", "--", "--help"])
        #expect(decoded.status == 65 && decoded.stdout.isEmpty, "\(decoded.stdout)")
        let help = try loyalty.run(["retailer", "offer", "set", "--help"])
        #expect(help.status == 0 && help.stdout.contains("USAGE: loyalty retailer offer set --title TEXT [--description TEXT]"))
        #expect(help.stdout.contains("[--reshow-after SECONDS] \(Self.clientOptions) MAJOR MINOR\n"))
    }
}
