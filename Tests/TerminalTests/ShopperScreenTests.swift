import Foundation
import LoyaltyTesting
import Testing

/// The real `loyalty scan` on a pseudo-terminal, read byte by byte, as a shopper sees it: beacons by their
/// retailer's name in the hot/cold colours, each offer as a banner on its category's colour, everything
/// inside the window, colour as --color, NO_COLOR and TERM say, and a closing summary of the offers.
@Suite struct ShopperScreenTests {
    static let (immediate, near, far) = ("\u{1B}[91m", "\u{1B}[38;5;208m", "\u{1B}[94m")
    static let (food, clothing, neutral) = ("\u{1B}[1;97;44m", "\u{1B}[1;97;41m", "\u{1B}[1;30;47m")

    /// Matey's, with a food offer at 1:1 (immediate), a clothing offer at 2:1 and another category's at 3:1
    /// (both near), and a beacon without an offer far away at 5:5; a shopper who synced them. (A simulated
    /// walk hears every beacon to its end, so none turns unknown: ScanScreenLinesTests has that colour.)
    /// Matey's, told apart from the other Matey's that tests register on the shared server, which refuses a
    /// name that reads as another retailer's.
    static func name(_ uuid: String) -> String { "Matey's \(uuid.prefix(4))" }

    static func mateysWalk() throws -> (StoryDevice, URL, uuid: String) {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let mateys = try server.retailer(name(uuid), uuid: uuid)
        try mateys.setOffer(
            1, 1, "30% off sushi at The Japanese Kitchen",
            ["--category", "food", "--description", "Nigiri and maki from the counter", "--ends", "2099-12-31T18:00:00Z"])
        try mateys.setOffer(2, 1, "50% off all ladies' clothing", ["--category", "clothing"])
        try mateys.setOffer(3, 1, "Free umbrella <b>today</b> \\e[31m", ["--category", "weather"])
        let shopper = try server.newAccount()
        try shopper.ok(["sync", "--all"])
        let walk = try server.walk([
            "\(uuid):1:1@0=0.3,30=0.3", "\(uuid):2:1@0=2,30=2", "\(uuid):3:1@0=2.5,30=2.5", "\(uuid):5:5@0=9,30=9",
        ])
        return (shopper, walk, uuid)
    }

    /// The walk on a terminal `columns` wide: each offer in turn (d), then the scan ends.
    private static func pageThroughTheWalk(
        columns: UInt16, _ options: [String] = [], environment: [String: String] = [:]
    ) throws -> (transcript: String, lastOffer: String, uuid: String) {
        let (shopper, walk, uuid) = try mateysWalk()
        let scan = try TerminalRun(
            ["scan", "--replay", walk.path, "--offline"] + options, shopper, columns: columns, environment: environment)
        defer { scan.kill() }
        #expect(scan.waitFor("capture ended: 2 more offers; d next"), "\(scan.transcript)")
        scan.send("d")
        #expect(scan.waitFor("capture ended: 1 more offer; d next"), "\(scan.transcript)")
        scan.send("d")
        #expect(scan.waitFor("capture ended: d dismiss, r redeem, q quit"), "\(scan.transcript)")
        let lastOffer = scan.transcript
        scan.send("d")
        #expect(scan.waitForExit() == 0, "\(scan.transcript)")
        return (scan.transcript, lastOffer, uuid)
    }

    @Test(arguments: [(80, 79), (120, 100)])
    func beaconsInHotColdColoursAndOffersOnTheirCategorysColourFitTheWindow(columns: Int, bannerWidth: Int) throws {
        let (transcript, lastOffer, uuid) = try Self.pageThroughTheWalk(columns: UInt16(columns))
        for (colour, row) in [
            (Self.immediate, "\(Self.name(uuid)) 1:1"), (Self.near, "\(Self.name(uuid)) 2:1"), (Self.far, "\(Self.name(uuid)) 5:5"),
        ] {
            #expect(transcript.contains(colour + row), "\(row): \(transcript)")
        }
        let titles = [
            (Self.food, "30% off sushi at The Japanese Kitchen"), (Self.clothing, "50% off all ladies' clothing"),
            (Self.neutral, "Free umbrella <b>today</b> \\e[31m"),
        ]
        for (colour, title) in titles {
            #expect(transcript.contains(colour + " OFFER from \(Self.name(uuid)): " + title), "\(title): \(transcript)")
        }
        #expect(transcript.contains("until 31 Dec 2099, 18:00 UTC"), "\(transcript)")
        #expect(transcript.contains(" Nigiri and maki from the counter "), "\(transcript)")
        #expect(transcript.contains("  entered \(Self.name(uuid))\r\n"), "\(transcript)")
        #expect(!transcript.contains(uuid) && !transcript.contains(uuid.lowercased()), "the UUID stays in --json")
        #expect(transcript.contains("offers: 3 shown, 0 redeemed, 3 dismissed, 0 left waiting"), "\(transcript)")

        let screen = TerminalScreen(transcript, columns: columns)
        #expect(screen.wraps == 0, "a line was wider than \(columns) columns:\n\(screen.lines.joined(separator: "\n"))")
        #expect(screen.row(holding: "OFFER from") == nil, "dismissed, the last offer left the screen: \(screen.lines)")
        let banner = try #require(TerminalScreen(lastOffer, columns: columns).row(holding: "OFFER from \(Self.name(uuid)): Free umbrella"))
        #expect(banner.filter { $0.colour == "1;30;47" }.count == bannerWidth, "\(banner.map(\.colour))")
    }

    /// The same walk without colour: NO_COLOR, or --color=never, on a terminal that would colour; the table is
    /// still redrawn in place. --color=always colours despite NO_COLOR.
    @Test(arguments: [
        (["--color=never"], [String: String](), false), ([], ["NO_COLOR": "1"], false),
        (["--color", "always"], ["NO_COLOR": "1"], true),
    ])
    func noColorAndColorNeverTurnColourOff(options: [String], environment: [String: String], coloured: Bool) throws {
        let (transcript, _, uuid) = try Self.pageThroughTheWalk(columns: 80, options, environment: environment)
        let colours = transcript.range(of: "\u{1B}\\[[0-9;]*m", options: .regularExpression)
        #expect((colours != nil) == coloured, "\(transcript)")
        #expect(transcript.contains(" OFFER from \(Self.name(uuid)): 30% off sushi"), "\(transcript)")
        #expect(transcript.range(of: "\u{1B}\\[[0-9]+A", options: .regularExpression) != nil, "the live table")
    }

    /// TERM=dumb: plain lines, no escape sequence at all: the events, a beacon's row when its proximity
    /// changes, each offer once.
    @Test func aDumbTerminalGetsPlainLines() throws {
        let (transcript, _, uuid) = try Self.pageThroughTheWalk(columns: 80, environment: ["TERM": "dumb"])
        #expect(!transcript.contains("\u{1B}"), "\(transcript)")
        let lines = transcript.components(separatedBy: "\r\n")
        #expect(lines.contains { $0.hasPrefix("\(Self.name(uuid)) 1:1") && $0.contains("immediate") }, "\(transcript)")
        #expect(lines.contains { $0.hasPrefix("\(Self.name(uuid)) 5:5") && $0.contains("far") }, "\(transcript)")
        #expect(lines.filter { $0.hasPrefix("BEACON") }.count == 1, "\(transcript)")
        #expect(lines.filter { $0.hasPrefix("\(Self.name(uuid)) 5:5") }.count <= 2, "only when its proximity changes: \(transcript)")
        for title in ["30% off sushi", "50% off all ladies' clothing", "Free umbrella"] {
            #expect(lines.filter { $0.hasPrefix(" OFFER from \(Self.name(uuid)): \(title)") }.count == 1, "\(transcript)")
        }
        #expect(lines.contains { $0.hasSuffix("  entered \(Self.name(uuid))") }, "\(transcript)")
        #expect(lines.allSatisfy { $0.count < 80 }, "\(transcript)")
    }

    /// A pipe gets the event log; --color=always paints its offer lines on their category's colour, with no
    /// cursor movement; without it, no colour at all; --json still gives the JSON lines, UUID and all.
    @Test func colorAlwaysInAPipePaintsTheOfferLines() throws {
        let (shopper, walk, uuid) = try Self.mateysWalk()
        let piped = try shopper.ok(["scan", "--replay", walk.path, "--offline", "--color=always"])
        #expect(piped.stdout.contains(Self.food + "offer from \(Self.name(uuid)): 30% off sushi"), "\(piped.stdout)")
        #expect(piped.stdout.contains(Self.clothing + "offer from \(Self.name(uuid)): 50% off"), "\(piped.stdout)")
        #expect(piped.stdout.contains("  entered \(Self.name(uuid))\n"), "\(piped.stdout)")
        #expect(!piped.stdout.contains("{\"event\""), "\(piped.stdout)")
        #expect(piped.stdout.range(of: "\u{1B}\\[[0-9]+A", options: .regularExpression) == nil, "\(piped.stdout)")
        #expect(piped.stderr.contains("offers: 3 shown, 0 redeemed, 0 dismissed, 0 left waiting"), "\(piped.stderr)")
        let (other, otherWalk, otherUUID) = try Self.mateysWalk()  // the first shopper has seen every offer now
        let plain = try other.ok(["scan", "--replay", otherWalk.path, "--offline"], ["TERM": "xterm-256color"])
        #expect(!plain.stdout.contains("\u{1B}") && plain.stdout.contains("offer from \(Self.name(otherUUID)): 30% off"), "\(plain.stdout)")

        let json = try shopper.ok(["scan", "--replay", walk.path, "--offline", "--color=always", "--json"])
        #expect(!json.stdout.contains("\u{1B}") && json.stdout.lowercased().contains(uuid.lowercased()), "\(json.stdout)")
        #expect(json.jsonLines.count == json.stdout.split(separator: "\n").count, "\(json.stdout)")
    }

    @Test func aWrongColorChoiceIsAUsageError() throws {
        let result = try StoryServer.shared.get().device().run(["scan", "--color=sometimes", "--replay", "x"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("--color"), "\(result.stderr)")
    }

    /// What the shopper did with each offer, counted in the closing summary: one dismissed, one redeemed, one
    /// still on screen when they quit, one left waiting.
    @Test func theSummaryCountsTheOffersShownRedeemedDismissedAndLeftWaiting() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let arcade = try server.retailer("Arcade \(uuid.prefix(4))", uuid: uuid)
        for minor in 1...4 { try arcade.setOffer(1, minor, "Offer \(minor)", []) }
        let shopper = try server.newAccount()
        try shopper.ok(["sync"])
        let walk = try server.walk((1...4).map { "\(uuid):1:\($0)@0=15,\($0 * 4)=15,\($0 * 4 + 1)=1,30=1" })
        let scan = try TerminalRun(["scan", "--replay", walk.path], shopper)
        defer { scan.kill() }
        #expect(scan.waitFor("capture ended: 3 more offers; d next"), "\(scan.transcript)")
        scan.send("d")
        #expect(scan.waitFor("capture ended: 2 more offers; d next"), "\(scan.transcript)")
        scan.send("r")
        #expect(scan.waitFor("redeemed \"Offer 2\": show code"), "\(scan.transcript)")
        #expect(scan.waitFor("capture ended: 1 more offer; d next"), "\(scan.transcript)")
        scan.send("q")
        #expect(scan.waitForExit() == 0, "\(scan.transcript)")
        #expect(scan.transcript.contains("offers: 3 shown, 1 redeemed, 1 dismissed, 1 left waiting"), "\(scan.transcript)")
    }

    /// Text a hostile server sent (its catalog holds what the real one refuses) shows as codes in the banner and
    /// the rows: it can neither clear the screen nor recolour it.
    @Test func escapeCharactersFromTheCatalogShowAsCodes() throws {
        let story = try StoryServer.shared.get()
        let shopper = try story.newAccount()
        let (uuid, retailerID, offerID) = (UUID().uuidString.lowercased(), UUID().uuidString.lowercased(), UUID().uuidString.lowercased())
        let hostile = HostileServerTests.hostileJSON
        let catalog = try CannedHTTPServer([
            CannedHTTPServer.Answer(
                "GET /v1/catalog", status: 200,
                body: """
                    {"cursor":"c1","full":true,"more":false,"server_time":"2026-12-01T10:00:00Z",\
                    "retailers":[{"id":"\(retailerID)","name":"Shop \(hostile)","uuid":"\(uuid)"}],\
                    "offers":[{"id":"\(offerID)","retailer_id":"\(retailerID)","major":1,"minor":1,\
                    "title":"Tea \(hostile)","description":"Hot \(hostile)","category":"food","per_shopper_limit":1,\
                    "updated_at":"2026-12-01T09:00:00Z"}],"removed":[],"stores":[],"removed_stores":[]}
                    """),
            CannedHTTPServer.Answer("GET /v1/seen", status: 200, body: #"{"cursor":"s1","items":[]}"#),
            CannedHTTPServer.Answer(
                "GET /v1/preferences", status: 200,
                body: #"{"muted_retailers":[],"quiet_hours":null,"offers_per_hour":20,"offers_per_day":50}"#),
        ])
        try shopper.ok(["config", "set", "server", catalog.url, "--move-credentials"])
        try shopper.ok(["sync", "--all"], ["LOYALTY_SERVER": catalog.url])
        let walk = try story.walk(["\(uuid.uppercased()):1:1@0=1,20=1"])
        let scan = try TerminalRun(["scan", "--replay", walk.path, "--offline"], shopper)
        defer { scan.kill() }
        #expect(scan.waitFor("capture ended: d dismiss"), "\(scan.transcript)")
        scan.send("q")
        #expect(scan.waitForExit() == 0, "\(scan.transcript)")
        let shown = HostileServerTests.shown
        // The title's second word goes under the first: each shows as 41 characters of codes.
        #expect(scan.transcript.contains(Self.food + " OFFER from Shop \(shown): Tea "), "\(scan.transcript)")
        #expect(scan.transcript.contains(Self.food + " \(shown) "), "\(scan.transcript)")
        #expect(scan.transcript.contains(" Hot \(shown)"), "\(scan.transcript)")
        #expect(scan.transcript.contains("Shop \(shown) 1:1"), "\(scan.transcript)")
        #expect(HostileServerTests.isClean(scan.transcript), "\(scan.transcript)")
    }

    /// A scan that can show no offer says what to run: without an account, or with nothing cached.
    @Test func aScanThatCanShowNoOfferSaysWhatToRun() throws {
        let server = try StoryServer.shared.get()
        let walk = try server.walk(["\(UUID().uuidString):1:1@0=1,3=1"])
        let stranger = try TerminalRun(["scan", "--replay", walk.path], server.device(), standardInput: .nullDevice)
        defer { stranger.kill() }
        #expect(stranger.waitForExit() == 0, "\(stranger.transcript)")
        #expect(stranger.transcript.contains("this device has no account; run `loyalty account create`"), "\(stranger.transcript)")

        let shopper = try server.newAccount()
        let empty = try TerminalRun(["scan", "--replay", walk.path, "--offline"], shopper, standardInput: .nullDevice)
        defer { empty.kill() }
        #expect(empty.waitForExit() == 0, "\(empty.transcript)")
        #expect(empty.transcript.contains("none are cached; run `loyalty sync`"), "\(empty.transcript)")
    }
}
