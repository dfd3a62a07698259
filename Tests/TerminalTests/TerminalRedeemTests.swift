import Foundation
import LoyaltyTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `r` during `loyalty scan` on a terminal when the redemption does not go through: the offer, already
/// recorded as seen, stays on screen unless the server refused it for good, and the scan says how to
/// redeem it later; a Ctrl-C abandons a redemption that hangs.
@Suite struct TerminalRedeemTests {
    /// The cached id of the offer at `uuid`:1:1, as `loyalty offers` lists it (other tests' retailers share
    /// the server and the titles).
    private static func firstOfferID(_ shopper: StoryDevice, _ uuid: String) throws -> String {
        let offers = try shopper.ok(["offers", "--json"]).jsonLines
        let first = offers.first { ($0["uuid"] as? String)?.uppercased() == uuid.uppercased() && $0["minor"] as? Int == 1 }
        return try #require(first?["id"] as? String).lowercased()
    }

    /// Whether a connection waits in the backlog of the listener on 127.0.0.1:`port`: in /proc/net/tcp, a
    /// listening socket's (state 0A) receive queue is its accept queue.
    private static func connectionWaits(on port: UInt16) -> Bool {
        let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
        let local = "0100007F:" + String(format: "%04X", port)
        return table.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 4 && fields[1] == local && fields[3] == "0A" && !fields[4].hasSuffix(":00000000")
        }
    }

    @Test func aRedemptionThatFailsLeavesTheOfferOnScreenAndSaysHowToRedeemLater() throws {
        let server = try StoryServer.shared.get()
        let (shopper, walk, uuid) = try TerminalScanTests.walkPastThreeOffers(server, name: "Failing arcade")
        let id = try Self.firstOfferID(shopper, uuid)
        // Bound but not listening: every request is refused at once.
        let closed = try LoopbackSocket(listening: false)
        try shopper.ok(["config", "set", "server", closed.url, "--move-credentials"])
        let scan = try TerminalRun(["scan", "--replay", walk.path, "--offline"], shopper, server: closed.url)
        defer { withExtendedLifetime(closed) { scan.kill() } }
        #expect(scan.waitFor("capture ended: 2 more offers; d next, r redeem, q quit"), "\(scan.transcript)")
        scan.send("r")
        #expect(scan.waitFor("later run `loyalty redeem \(id)`"), "\(scan.transcript)")
        let failed = try #require(scan.transcript.range(of: "could not redeem \"First sushi\""))
        let redrawn = scan.transcript[failed.upperBound...]
        #expect(redrawn.contains("OFFER from Failing arcade: First sushi"), "\(scan.transcript)")
        #expect(redrawn.contains("capture ended: 2 more offers; d next, r redeem, q quit"), "\(scan.transcript)")
        #expect(!scan.transcript.contains("Second pizza"), "the next offer did not take its place")
        scan.send("q")
        #expect(scan.waitForExit() == 0, "\(scan.transcript)")
        // The advice works once the server answers: the same request, redeemed once.
        try shopper.ok(["config", "set", "server", server.url, "--move-credentials"])
        let redeemed = try shopper.ok(["redeem", id])
        #expect(redeemed.stdout.contains("redeemed \"First sushi\""), "\(redeemed.stdout)")
    }

    /// A refusal that no retry changes (the offer sold out to another shopper before the scan) takes the offer
    /// off the screen, saying why; the next waiting offer shows.
    @Test func aDefiniteRefusalMovesOnToTheNextOffer() throws {
        let server = try StoryServer.shared.get()
        let (shopper, walk, uuid) = try TerminalScanTests.walkPastThreeOffers(server, name: "Sold-out arcade", firstOptions: ["--total-limit", "1"])
        let rival = try server.newAccount()
        try rival.ok(["sync"])
        try rival.visit(uuid, minors: [1])
        try rival.ok(["redeem", "\(uuid):1:1"])
        let scan = try TerminalRun(["scan", "--replay", walk.path], shopper)
        defer { scan.kill() }
        #expect(scan.waitFor("capture ended: 2 more offers; d next, r redeem, q quit"), "\(scan.transcript)")
        scan.send("r")
        #expect(scan.waitFor("\"First sushi\" cannot be redeemed again"), "\(scan.transcript)")
        #expect(scan.waitFor("OFFER from Sold-out arcade: Second pizza"), "\(scan.transcript)")
        #expect(scan.waitFor("capture ended: 1 more offer; d next"), "\(scan.transcript)")
        #expect(!scan.transcript.contains("loyalty redeem"), "nothing to redeem later: \(scan.transcript)")
        scan.send("q")
        #expect(scan.waitForExit() == 0, "\(scan.transcript)")
    }

    /// On an 80-column terminal the line with the code fits one row, the code whole beside what to do with it:
    /// a long title is cut (the banner above showed it whole).
    @Test func theRedeemedLineFitsAnEightyColumnWindow() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Narrow arcade", uuid: uuid)
        try store.setOffer(1, 1, "Buy one large pizza and get a second one free, any topping, all day long", [])
        let shopper = try server.newAccount()
        try shopper.ok(["sync"])
        let walk = try server.walk(["\(uuid):1:1@0=1,20=1"])
        let scan = try TerminalRun(["scan", "--replay", walk.path], shopper, columns: 80)
        defer { scan.kill() }
        #expect(scan.waitFor("capture ended: d dismiss, r redeem, q quit"), "\(scan.transcript)")
        scan.send("r")
        #expect(scan.waitForExit() == 0, "\(scan.transcript)")
        let code = try #require(try shopper.ok(["history", "--json"]).jsonLines.compactMap { $0["code"] as? String }.first)
        let screen = TerminalScreen(scan.transcript, columns: 80)
        let row = screen.lines.first { $0.contains("redeemed \"Buy one") }
        #expect(row?.contains(": show code \(code) at the till") == true, "\(screen.lines)")
        #expect(screen.wraps == 0, "\(screen.lines)")
    }

    /// The redemption goes through the scan's API client, which asks the scan's Interruption: a Ctrl-C
    /// ends the scan long before the request's 60 s timeout, the offer still unredeemed.
    @Test func aCtrlCAbandonsARedemptionThatHangs() throws {
        let server = try StoryServer.shared.get()
        let (shopper, walk, uuid) = try TerminalScanTests.walkPastThreeOffers(server, name: "Hanging arcade")
        let id = try Self.firstOfferID(shopper, uuid)
        let silent = try LoopbackSocket(listening: true)
        try shopper.ok(["config", "set", "server", silent.url, "--move-credentials"])
        let scan = try TerminalRun(
            ["scan", "--replay", walk.path, "--offline", "--timeout", "60"], shopper, server: silent.url)
        defer { withExtendedLifetime(silent) { scan.kill() } }
        #expect(scan.waitFor("capture ended: 2 more offers; d next, r redeem, q quit"), "\(scan.transcript)")
        scan.send("r")
        #expect(scan.waitFor(seconds: 30) { Self.connectionWaits(on: silent.port) }, "the redemption is under way")
        Glibc.kill(scan.process.processIdentifier, SIGINT)
        #expect(scan.waitForExit(seconds: 10) == 0, "\(scan.transcript)")
        #expect(scan.transcript.contains("loyalty redeem \(id)"), "\(scan.transcript)")
        #expect(scan.transcript.contains("replayed "), "\(scan.transcript)")
        #expect(scan.localModes() & tcflag_t(ECHO | ICANON) == tcflag_t(ECHO | ICANON))
    }
}
