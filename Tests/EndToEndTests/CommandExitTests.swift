import Foundation
import LoyaltyTesting
import Testing

/// Exit codes as the README's table gives them, messages that say a thing once, options that work alone.
@Suite struct CommandExitTests {
    private func loyalty(_ arguments: [String], _ environment: [String: String] = [:]) throws -> Binary.Result {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-exit-\(UUID())")
        return try Binary("loyalty").run(arguments, environment: ["LOYALTY_HOME": home.path].merging(environment) { $1 })
    }

    @Test func exitCodesFollowTheReadme() throws {
        let server = try StoryServer.shared.get()
        let directory = server.work.path
        let notACapture = server.work.appendingPathComponent("not-a-capture-\(UUID()).txt")
        try Data("hello\n".utf8).write(to: notACapture)
        let cases: [(arguments: [String], environment: [String: String], status: Int32)] = [
            (["scan", "--replay", "/nonexistent/walk.btsnoop"], [:], 74),
            (["scan", "--replay", directory], [:], 74),
            (["beacon", "calibrate", "8F0C1DDC-11E5-4A07-8910-425941B072F9:1:1", "--replay", "/nonexistent/walk.btsnoop"], [:], 74),
            (["beacon", "calibrate", "8F0C1DDC-11E5-4A07-8910-425941B072F9:1:1", "--replay", notACapture.path], [:], 65),
            (["sync", "--server", "notaurl"], [:], 64),
            (["redeem", "garbage"], [:], 64),
            (["retailer", "register", "--name", ""], ["LOYALTY_ADMIN_TOKEN": server.operatorToken, "LOYALTY_SERVER": server.url], 64),
            (["retailer", "offers"], ["LOYALTY_RETAILER_KEY": "lk_abc\ndef", "LOYALTY_SERVER": server.url], 77),
        ]
        for (arguments, environment, status) in cases {
            let result = try loyalty(arguments, environment)
            #expect(result.status == status, "loyalty \(arguments.joined(separator: " ")): \(result.status) \(result.stderr)")
            #expect(result.stderr.hasPrefix("error: ") || result.stderr.hasPrefix("loyalty"), "\(result.stderr)")
        }
    }

    /// libcurl is loaded on the first request: without it (hidden here under an empty file, in a mount
    /// namespace of the run's own) a request is "unavailable", naming the package, not a network failure.
    @Test func aMissingLibcurlIsUnavailableNamingItsPackage() throws {
        let hide = """
            library=$(readlink -f "$(ldconfig -p | awk '/libcurl\\.so\\.4 /{print $NF; exit}')") &&
            mount --bind /dev/null "$library" && exec "$0" account create
            """
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-exit-\(UUID())")
        let result = try Binary(at: "unshare").run(
            ["--mount", "sh", "-c", hide, Binary("loyalty").url.path], environment: ["LOYALTY_HOME": home.path])
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("libcurl4") && !result.stderr.contains("server URL"), "\(result.stderr)")
        // A command that sends nothing still works without it.
        let offline = try Binary(at: "unshare").run(
            ["--mount", "sh", "-c", hide.replacing("account create", with: "decode 0201061aff4c0002158f0c1ddc11e54a078910425941b072f900010001c5"), Binary("loyalty").url.path])
        #expect(offline.status == 0, "\(offline.stderr)")
    }

    @Test func aMalformedPacketIsSaidOnce() throws {
        let result = try loyalty(["decode", "0201"])
        #expect(result.status == 65)
        #expect(result.stderr.components(separatedBy: "malformed packet").count == 2, "\(result.stderr)")
    }

    @Test func aLongTrackingAgeWorksWithoutOtherSettings() throws {
        let server = try StoryServer.shared.get()
        let walk = try server.walk(["\(UUID().uuidString):1:1@0=1,40=1"])
        let result = try loyalty(["scan", "--replay", walk.path, "--json", "--offline", "--tracking-age", "20", "--exit-timeout", "30"])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// `1e300` seconds: refused at once, with the size it would have had, and no file left behind.
    @Test func anEndlessWalkIsRefusedSayingItsSize() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("endless-\(UUID()).btsnoop")
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try loyalty(
            ["beacon", "simulate", "--walk", "8F0C1DDC-11E5-4A07-8910-425941B072F9:1:1@0=1,1e300=1", "--write", file.path])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("would write about"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    /// Codes are for shoppers who came near the beacon (issue 23, item 5): a fresh account is told to go there.
    @Test func redeemingAnOfferNeverSeenSaysToGoNearItsBeacon() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Rival shop", uuid: uuid)
        try store.setOffer(1, 1, "Limited sushi", ["--total-limit", "20"])
        let shopper = try server.newAccount()
        try shopper.ok(["sync", "--all"])  // The offer is in the cache, as if the shopper followed the shop.
        let unseen = try shopper.run(["redeem", "\(uuid):1:1"])
        #expect(unseen.status == 1, "\(unseen.stdout)\(unseen.stderr)")
        #expect(unseen.stderr.contains("has not been near its beacon") && unseen.stderr.contains("loyalty scan"), "\(unseen.stderr)")
        try shopper.visit(uuid, minors: [1])
        #expect(try shopper.ok(["redeem", "\(uuid):1:1"]).stdout.contains("Limited sushi"))
    }

    @Test func offerMessagesSayWhatIsTrue() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Calendar shop", uuid: uuid)
        try store.setOffer(1, 1, "Next year", ["--starts", "2031-01-01T00:00:00Z"])
        try store.setOffer(1, 2, "Now", [])
        let shopper = try server.newAccount()
        try shopper.ok(["sync", "--all"])

        // An offer that has not started is not "no longer available".
        let early = try shopper.run(["redeem", "\(uuid):1:1"])
        #expect(early.status != 0)
        #expect(early.stderr.contains("not started") && !early.stderr.contains("no longer"), "\(early.stderr)")
        // The listing marks it.
        let listing = try shopper.ok(["offers"]).stdout
        let line = try #require(listing.split(separator: "\n").first { $0.contains("Next year") })
        #expect(line.contains("starts 2031-01-01"), "\(listing)")
        // A retailer the cache does not hold is named as such, not "no offers cached".
        let nobody = try shopper.run(["offers", "--retailer", "nobody"])
        #expect(!nobody.stderr.contains("no offers cached") && !nobody.stdout.contains("no offers cached"), "\(nobody.stdout)\(nobody.stderr)")
        #expect((nobody.stdout + nobody.stderr).contains("nobody"), "\(nobody.stdout)\(nobody.stderr)")
    }
}
