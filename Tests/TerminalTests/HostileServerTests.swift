import Foundation
import LoyaltyTesting
import Testing

/// Text that came over the network never reaches the terminal raw, even from a server that sends what the real
/// one refuses to store: a canned server answers with escape sequences (a window-title OSC, a screen clear)
/// and a bidirectional override in its error messages, redemption codes and till answers, and `loyalty`
/// prints each as its code (`\u001B`).
@Suite struct HostileServerTests {
    /// Sets the terminal's title, clears the screen, then turns the rest of the line right to left.
    static let hostile = "\u{1B}]0;pwned\u{07}\u{1B}[2J\u{202E}lived"
    static let shown = #"\u001B]0;pwned\u0007\u001B[2J\u202Elived"#

    /// `hostile` in a JSON string.
    static let hostileJSON = #"\u001b]0;pwned\u0007\u001b[2J\u202elived"#

    static func error(_ status: Int) -> CannedHTTPServer.Answer {
        CannedHTTPServer.Answer(
            "", status: status, body: #"{"error":{"code":"validation_failed","message":"refused \#(hostileJSON)"}}"#)
    }

    static func redemption(offerID: String) -> CannedHTTPServer.Answer {
        CannedHTTPServer.Answer(
            "POST /v1/redemptions", status: 201,
            body: """
                {"redemption_id":"\(UUID().uuidString.lowercased())","offer_id":"\(offerID)",\
                "code":"K7M2\(hostileJSON)","redeemed_at":"2026-12-01T10:00:00Z"}
                """)
    }

    /// A retailer named `name` with one offer at 1:1 on a beacon UUID of its own, and a shopper who synced it
    /// from the real server.
    static func shop(_ name: String, offer: String) throws
        -> (retailer: StoryDevice, shopper: StoryDevice, uuid: String, offerID: String)
    {
        let story = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let retailer = try story.retailer(name, uuid: uuid)
        try retailer.setOffer(1, 1, offer, [])
        let shopper = try story.newAccount()
        try shopper.ok(["sync", "--all"])
        let offerID = try #require(try shopper.ok(["offers", "--json"]).jsonLines.first?["id"] as? String)
        return (retailer, shopper, uuid, offerID)
    }

    /// Whether `text` holds none of `hostile`'s characters raw.
    static func isClean(_ text: String) -> Bool {
        !text.contains("]0;pwned\u{07}") && !text.contains("\u{1B}[2J") && !text.contains("\u{202E}")
    }

    @Test func theServersErrorMessageIsEscapedOnEveryErrorLine() throws {
        let server = try CannedHTTPServer([Self.error(422)])
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-hostile-\(UUID())")
        let result = try Binary("loyalty").run(
            ["account", "create"], environment: ["LOYALTY_HOME": home.path, "LOYALTY_SERVER": server.url])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("error: the server refused the request (HTTP 422): refused \(Self.shown)"), "\(result.stderr)")
        #expect(Self.isClean(result.stderr + result.stdout), "\(result.stderr)")
    }

    /// `redeem` prints the code beside its QR symbol, `history` the newest one not used yet, `till check` the
    /// code, the offer's title and the till's name as the server gave them.
    @Test func codesTitlesAndTillNamesFromTheServerAreEscaped() throws {
        let (retailer, shopper, uuid, offerID) = try Self.shop("Hostile shop", offer: "Free coffee")

        let server = try CannedHTTPServer([Self.redemption(offerID: offerID)])
        // The shopper's server turned hostile: its token goes there.
        try shopper.ok(["config", "set", "server", server.url, "--move-credentials"])
        for options in [[], ["--qr"]] {
            let redeemed = try shopper.run(["redeem", "\(uuid):1:1"] + options, ["LOYALTY_SERVER": server.url])
            #expect(redeemed.status == 0, "\(redeemed.stderr)")
            #expect(redeemed.stdout.contains("show code K7M2\(Self.shown) at the till"), "\(redeemed.stdout)")
            #expect(Self.isClean(redeemed.stdout + redeemed.stderr), "\(redeemed.stdout)")
        }
        let history = try shopper.ok(["history"]).stdout
        #expect(history.contains("show code K7M2\(Self.shown) at the till"), "\(history)")
        #expect(Self.isClean(history), "\(history)")

        let till = try CannedHTTPServer([
            CannedHTTPServer.Answer(
                "POST /v1/till/check", status: 200,
                body: """
                    {"code":"K7M2\(Self.hostileJSON)","status":"accepted","offer_id":"\(offerID)","major":1,"minor":1,\
                    "title":"Free \(Self.hostileJSON)","redeemed_at":"2026-12-01T10:00:00Z",\
                    "accepted_at":"2026-12-01T10:05:00Z","accepted_till":"Front \(Self.hostileJSON)"}
                    """)
        ])
        let checked = try retailer.run(
            ["till", "check", "K7M2-2345"], ["LOYALTY_SERVER": till.url, "LOYALTY_TILL_KEY": "lt_hostile"])
        #expect(checked.status == 1, "\(checked.stderr)")
        #expect(
            checked.stderr.contains(
                "K7M2\(Self.shown) was used at 2026-12-01T10:05:00Z at the till \"Front \(Self.shown)\": \"Free \(Self.shown)\""),
            "\(checked.stderr)")
        #expect(Self.isClean(checked.stdout + checked.stderr), "\(checked.stderr)")
    }

    /// On a scan's terminal: the warning of a failed sync, and the code of an offer redeemed with `r`.
    @Test func aScansSyncWarningAndRedemptionAreEscaped() throws {
        let (_, shopper, uuid, offerID) = try Self.shop("Hostile arcade", offer: "Free tea")
        let walk = try StoryServer.shared.get().walk(["\(uuid):1:1@0=1,20=1"])

        let server = try CannedHTTPServer([Self.redemption(offerID: offerID), Self.error(503)])
        try shopper.ok(["config", "set", "server", server.url, "--move-credentials"])
        let scan = try TerminalRun(["scan", "--replay", walk.path], shopper, server: server.url)
        defer { scan.kill() }
        #expect(scan.waitFor("warning: the server refused the request (HTTP 503): refused \(Self.shown)"), "\(scan.transcript)")
        #expect(scan.waitFor("OFFER from Hostile arcade: Free tea"), "\(scan.transcript)")
        scan.send("r")
        #expect(scan.waitFor("redeemed \"Free tea\": show code K7M2\(Self.shown) at the till"), "\(scan.transcript)")
        scan.send("q")
        #expect(scan.waitForExit() == 0, "\(scan.transcript)")
        #expect(Self.isClean(scan.transcript), "\(scan.transcript)")
    }
}
