import Beacons
import DBus
import Foundation
import LoyaltyTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `loyalty scan --notify` against a real server, on a private session bus (a dbus-daemon of its own) with
/// python-dbusmock's notification server recording every Notify and clicking for the shopper (ActionInvoked).
@Suite(.serialized) struct NotificationTests {
    static let markupTitle = "Sushi <b>30%</b> & \"more\""
    static let markupDescription = "<i>Tuna</i> & salmon, <a href=\"http://x\">today</a>"

    /// The bus and its notification server, or nil with the reason printed; missing tools fail under CI.
    func notificationServer(capabilities: String, refusing: String? = nil) throws -> (PrivateBus, NotificationMock)? {
        guard NotificationMock.isInstalled else {
            if ProcessInfo.processInfo.environment["CI"] == nil {
                print("NotificationTests not run: python3-dbusmock is missing (make test-deps)")
            } else {
                Issue.record("python3-dbusmock is missing: make test-deps installs it")
            }
            return nil
        }
        let bus = try PrivateBus(refusing: refusing)
        return (bus, try NotificationMock(busAddress: bus.address, capabilities: capabilities))
    }

    /// A retailer with offers at 1:1 and 1:2 (both with markup in their text) and a shopper who synced them.
    /// The shared server refuses a name that reads as another retailer's: each test's store has its own.
    static func storeName(_ uuid: String) -> String { "Matey's <Food> & Co \(uuid.prefix(4))" }

    func shopperWithOffers() throws -> (shopper: StoryDevice, store: StoryDevice, uuid: String) {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer(Self.storeName(uuid), uuid: uuid)
        try store.setOffer(1, 1, Self.markupTitle, ["--description", Self.markupDescription, "--category", "food"])
        try store.setOffer(1, 2, "Pizza 2 for 1", ["--description", "Tucci's", "--category", "food"])
        let shopper = try server.newAccount()
        try shopper.ok(["sync", "--all"])
        return (shopper, store, uuid)
    }

    @Test func eachOfferIsPostedAndRedeemReplacesItWithTheCodeAndItsQRImage() throws {
        guard let (bus, mock) = try notificationServer(capabilities: "body body-markup actions") else { return }
        let (shopper, store, uuid) = try shopperWithOffers()
        let walk = try shopper.server.walk(["\(uuid):1:1@0=1,60=1"])
        let scan = try RunningScan(shopper, ["--replay", walk.path, "--realtime", "--notify"], bus: bus.address)

        let offer = try #require(try mock.waitForNotifications(1).first)
        #expect(offer.appName == "loyalty" && offer.replacesID == 0)
        // The summary is never markup: as the retailer wrote it. The body is, here: escaped.
        #expect(offer.summary == "\(Self.storeName(uuid)): \(Self.markupTitle)")
        #expect(offer.body == "&lt;i&gt;Tuna&lt;/i&gt; &amp; salmon, &lt;a href=&quot;http://x&quot;&gt;today&lt;/a&gt;")
        #expect(offer.actionKeys == ["default", "redeem", "dismiss"])
        #expect(offer.hints["desktop-entry"] == .string("loyalty") && offer.hints["category"] == .string("x-loyalty.offer"))
        #expect(offer.hints["urgency"] == .byte(1))

        try mock.invoke("redeem", on: mock.id(of: 0, in: [offer]))
        let calls = try mock.waitForNotifications(2)
        try #require(calls.count == 2, "no notification replaced the offer's: \(scan.stop().stderr)")
        let code = calls[1]
        #expect(code.replacesID == 1 && code.actions.isEmpty && code.expireTimeout == 0)
        let image = try #require(code.hints["image-path"]?.string.flatMap(URL.init(string:)))
        let png = try Data(contentsOf: image)
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        #expect((try FileManager.default.attributesOfItem(atPath: image.path)[.posixPermissions] as? Int) == 0o600)

        let result = scan.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let redeemed = try #require(result.jsonLines.first { $0["event"] as? String == "redeemed" }, "\(result.stdout)")
        let shown = try #require(redeemed["code"] as? String)
        #expect(code.body == "Show code \(shown) at the till")
        #expect(try store.statistics().first?.redemptions == 1)
        // The summary still closes the scan that SIGTERM stopped.
        #expect(result.jsonLines.last?["event"] as? String == "summary")
    }

    /// Dismiss on the first offer's notification ends its dwell at once: the one waiting shows next.
    @Test func dismissShowsTheWaitingOfferAtOnce() throws {
        guard let (bus, mock) = try notificationServer(capabilities: "body actions") else { return }
        let (shopper, _, uuid) = try shopperWithOffers()
        let walk = try shopper.server.walk(["\(uuid):1:1@0=1,60=1", "\(uuid):1:2@0=1,60=1"])
        let scan = try RunningScan(
            shopper, ["--replay", walk.path, "--realtime", "--notify", "--dwell", "40"], bus: bus.address)
        let first = try #require(try mock.waitForNotifications(1).first)
        try mock.invoke("dismiss", on: 1)
        let calls = try mock.waitForNotifications(2)
        let result = scan.stop()
        try #require(calls.count == 2, "\(result.stderr)")
        #expect(calls[1].replacesID == 0 && calls[1].summary != first.summary)
        let times = result.jsonLines.filter { $0["event"] as? String == "offer" }.compactMap { $0["t"] as? Double }
        try #require(times.count == 2, "\(result.stdout)")
        #expect(times[1] - times[0] < 40)
    }

    /// On the shopper's screen, once a replay ended with offers left: Dismiss on a notification is carried out as it
    /// comes (not at the next key) and counts in the summary, and d at the terminal closes the notification of the
    /// offer it dismissed.
    @Test func answersAreCarriedOutWhileTheScreenWaitsForKeys() throws {
        guard let (bus, mock) = try notificationServer(capabilities: "body actions") else { return }
        let name = "Answering arcade \(UUID().uuidString.prefix(8))"
        let (shopper, walk, _) = try TerminalScanTests.walkPastThreeOffers(try StoryServer.shared.get(), name: name)
        let scan = try TerminalRun(
            ["scan", "--replay", walk.path, "--notify"], shopper,
            environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer { scan.kill() }
        #expect(scan.waitFor("capture ended: 2 more offers; d next, r redeem, q quit"), "\(scan.transcript)")
        let first = try mock.waitForNotifications(1)
        try #require(first.count == 1)
        try mock.invoke("dismiss", on: mock.id(of: 0, in: first))
        #expect(scan.waitFor("OFFER from \(name): Second pizza", seconds: 10), "\(scan.transcript)")

        let second = try mock.waitForNotifications(2)
        try #require(second.count == 2, "\(scan.transcript)")
        scan.send("d")
        #expect(scan.waitFor("OFFER from \(name): Third coat", seconds: 10), "\(scan.transcript)")
        let secondID = mock.id(of: 1, in: second)
        #expect(scan.waitFor(seconds: 10) { (try? mock.closedNotifications().contains(secondID)) == true })
        scan.send("q")
        #expect(scan.waitForExit(seconds: 10) == 0, "\(scan.transcript)")
        #expect(scan.transcript.contains("offers: 3 shown, 0 redeemed, 2 dismissed"), "\(scan.transcript)")
    }

    /// A server without actions or body markup: no buttons, and the body as the retailer wrote it.
    @Test func aPlainServerGetsNoActionsAndAnUnescapedBody() throws {
        guard let (bus, mock) = try notificationServer(capabilities: "body") else { return }
        let (shopper, _, uuid) = try shopperWithOffers()
        let walk = try shopper.server.walk(["\(uuid):1:1@0=1,20=1"])
        let result = try RunningScan(shopper, ["--replay", walk.path, "--notify"], bus: bus.address).finish()
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        let calls = try mock.notifications()
        try #require(calls.count == 1)
        #expect(calls[0].actions.isEmpty && calls[0].body == Self.markupDescription)
    }

    /// --notify-on enter,exit: a notification per entry and per exit, naming the retailer; the exit replaces
    /// the entry's; offers are not posted.
    @Test func entriesAndExitsNotifyOncePerEntry() throws {
        guard let (bus, mock) = try notificationServer(capabilities: "body") else { return }
        let (shopper, _, uuid) = try shopperWithOffers()
        // Heard 0-10 s, silent 10-40 s (the exit comes after the 10 s timeout), heard again 40-50 s.
        let walk = shopper.server.work.appendingPathComponent("gap-\(UUID().uuidString).btsnoop")
        let writer = try BTSnoopWriter(path: walk.path)
        for start: Double in [1_700_000_000, 1_700_000_040] {
            let beacon = try #require(BeaconWalk.Beacon(parsing: "\(uuid):2:9@0=1,10=1", measuredPower: -59, index: 0))
            try BeaconWalk(beacons: [beacon], start: BTSnoopTimestamp(unixSeconds: start)).write(to: writer)
        }
        try writer.close()
        let result = try RunningScan(
            shopper, ["--replay", walk.path, "--notify", "--notify-on", "enter,exit"], bus: bus.address
        ).finish()
        #expect(result.status == 0, "\(result.stderr)")
        let calls = try mock.notifications()
        #expect(Array(calls.map(\.summary).prefix(3)) == ["Entered", "Left", "Entered"].map { "\($0) \(Self.storeName(uuid))" })
        #expect(calls.map(\.replacesID).prefix(3) == [0, 1, 1])
        #expect(calls.allSatisfy { $0.hints["category"] == .string("x-loyalty.region") && $0.hints["urgency"] == .byte(0) })
    }

    /// No session bus at all, a bus with no notification server, a bus whose policy refuses us: the scan shows
    /// and records the same offers as without --notify and says once why notifications are off.
    @Test(arguments: ["no bus", "no server", "refused"])
    func withoutNotificationsTheScanGoesOnAndSaysSoOnce(_ situation: String) throws {
        let (shopper, _, uuid) = try shopperWithOffers()
        let walk = try shopper.server.walk(["\(uuid):1:1@0=1,10=1,12=30", "\(uuid):1:2@0=30,20=30,22=1,30=1"])
        var environment = ["DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": ""]
        var kept: (PrivateBus, NotificationMock?)? = nil
        switch situation {
        case "no server":
            let bus = try PrivateBus()
            environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
            kept = (bus, nil)
        case "refused":
            guard let (bus, mock) = try notificationServer(capabilities: "body", refusing: "org.freedesktop.Notifications")
            else { return }
            environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
            kept = (bus, mock)
        default: break
        }
        defer { withExtendedLifetime(kept) {} }
        let result = try shopper.ok(["scan", "--replay", walk.path, "--json", "--notify"], environment)
        let titles = result.jsonLines.compactMap { ($0["offer"] as? [String: Any])?["title"] as? String }
        #expect(titles == [Self.markupTitle, "Pizza 2 for 1"])
        let warnings = result.stderr.split(separator: "\n").filter { $0.hasPrefix("notifications are off: ") }
        #expect(warnings.count == 1, "\(result.stderr)")
        let expected = ["no bus": "DBUS_SESSION_BUS_ADDRESS", "no server": "no notification server", "refused": "refuses us"]
        #expect(warnings.first?.contains(expected[situation]!) == true, "\(result.stderr)")
        #expect(try shopper.ok(["history", "--json"]).jsonLines.count == 2)
    }

    /// The notification server dies after the first offer: the second still shows and is recorded, and the scan
    /// says once that notifications went off.
    @Test func aServerThatVanishesMidScanTurnsNotificationsOffOnce() throws {
        guard let (bus, mock) = try notificationServer(capabilities: "body actions") else { return }
        let (shopper, _, uuid) = try shopperWithOffers()
        let walk = try shopper.server.walk(["\(uuid):1:1@0=1,4=1,5=30", "\(uuid):1:2@0=30,6=30,7=1,12=1"])
        let scan = try RunningScan(shopper, ["--replay", walk.path, "--realtime", "--notify"], bus: bus.address)
        _ = try mock.waitForNotifications(1)
        mock.stop()
        let result = scan.finish()
        #expect(result.status == 0, "\(result.stderr)")
        let titles = result.jsonLines.compactMap { ($0["offer"] as? [String: Any])?["title"] as? String }
        #expect(titles == [Self.markupTitle, "Pizza 2 for 1"])
        #expect(result.stderr.components(separatedBy: "notifications are off: the notification server left").count == 2,
            "\(result.stderr)")
        #expect(try shopper.ok(["history", "--json"]).jsonLines.count == 2)
    }
}

extension NotificationTests {
    /// doctor says whether scan --notify has a server to post to, and what a user service has to reach the radio.
    @Test func doctorSaysWhatNotificationsAndTheUserServiceHave() throws {
        guard let (bus, mock) = try notificationServer(capabilities: "body actions") else { return }
        defer { withExtendedLifetime(mock) {} }
        let loyalty = Binary("loyalty")
        func desktopChecks(_ environment: [String: String]) throws -> [String: [String: Any]] {
            let line = try #require(try loyalty.run(["doctor", "--json"], environment: environment).jsonLines.first)
            let checks = try #require(line["desktop_checks"] as? [[String: Any]])
            return Dictionary(checks.map { ($0["name"] as? String ?? "", $0) }) { $1 }
        }
        let served = try desktopChecks(["DBUS_SESSION_BUS_ADDRESS": bus.address])
        #expect(served["notifications"]?["status"] as? String == "ok")
        #expect((served["notifications"]?["detail"] as? String)?.contains("mock-notify shows") == true)
        #expect((served["notifications"]?["detail"] as? String)?.contains("with Redeem and Dismiss buttons") == true)
        #expect((served["user-service"]?["detail"] as? String)?.contains("`bluetooth` group") == true)
        let unserved = try desktopChecks(["DBUS_SESSION_BUS_ADDRESS": "", "XDG_RUNTIME_DIR": ""])
        #expect(unserved["notifications"]?["status"] as? String == "warning")
        #expect((unserved["notifications"]?["detail"] as? String)?.hasPrefix("no session bus") == true)
        let text = try loyalty.run(["doctor"], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address]).stdout
        #expect(text.contains("ok      notifications") && text.contains("user-service"), "\(text)")
    }
}

/// `loyalty scan` running in the background with a session bus, its output collected until it ends.
final class RunningScan {
    private let process = Process()
    private let out = Pipe()
    private let err = Pipe()
    private let readers = DispatchGroup()
    private let box = OutputBox()

    init(_ device: StoryDevice, _ arguments: [String], bus: String) throws {
        process.executableURL = Binary("loyalty").url
        process.arguments = ["scan", "--json"] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging([
            "LOYALTY_HOME": device.home.path, "LOYALTY_SERVER": device.server.url, "DBUS_SESSION_BUS_ADDRESS": bus,
        ]) { $1 }
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        for (pipe, isError) in [(out, false), (err, true)] {
            DispatchQueue.global().async(group: readers) { [box] in
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                box.set(data, isError: isError)
            }
        }
    }

    /// SIGTERM, as `systemctl stop` sends it, and what the scan printed.
    func stop() -> Binary.Result {
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        return finish()
    }

    /// Waits for the scan to end by itself.
    func finish() -> Binary.Result {
        process.waitUntilExit()
        readers.wait()
        return Binary.Result(
            status: process.terminationStatus, stdout: String(decoding: box.stdout, as: UTF8.self),
            stderr: String(decoding: box.stderr, as: UTF8.self))
    }
}

private final class OutputBox: @unchecked Sendable {  // guarded by lock
    private let lock = NSLock()
    private(set) var stdout = Data()
    private(set) var stderr = Data()

    func set(_ data: Data, isError: Bool) {
        lock.lock()
        defer { lock.unlock() }
        if isError { stderr = data } else { stdout = data }
    }
}

/// A real notification server: dunst on an X server of its own (Xvfb) shows the offer a scan posts; the
/// screen is saved as a PNG (into $LOYALTY_SCREENSHOTS when set; docs/screenshots/ holds one).
@Suite struct NotificationScreenTests {
    static let tools = ["/usr/bin/Xvfb", "/usr/bin/dunst", "/usr/bin/dunstctl", "/usr/bin/xwd", "/usr/bin/convert"]

    @Test func dunstShowsTheOfferAndTheScreenIsSaved() throws {
        let missing = Self.tools.filter { !FileManager.default.isExecutableFile(atPath: $0) }
        guard missing.isEmpty else {
            if ProcessInfo.processInfo.environment["CI"] == nil {
                return print("NotificationScreenTests not run: \(missing) missing (make test-deps)")
            }
            Issue.record("\(missing) missing: make test-deps installs them")
            return
        }
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Matey's Food Hall", uuid: uuid)
        try store.setOffer(
            1, 1, "30% off sushi at The Japanese Kitchen",
            ["--description", "Today only: all nigiri & maki <3", "--category", "food"])
        let shopper = try server.newAccount()
        try shopper.ok(["sync", "--all"])
        let walk = try server.walk(["\(uuid):1:1@0=1,12=1"])

        let display = try XServer()
        let bus = try PrivateBus()
        let settings = server.work.appendingPathComponent("dunstrc-\(UUID().uuidString)")
        try """
        [global]
            width = 520
            height = 200
            origin = top-right
            offset = 20x20
            font = DejaVu Sans 12
            frame_width = 2
            frame_color = "#1F6FEB"
            padding = 12
            horizontal_padding = 12
            markup = full
            format = "<b>%s</b>\\n%b"
            show_indicators = no
        [urgency_normal]
            background = "#0B3D91"
            foreground = "#FFFFFF"
            timeout = 0
        """.write(to: settings, atomically: true, encoding: .utf8)
        let session = ["DISPLAY": display.name, "DBUS_SESSION_BUS_ADDRESS": bus.address]
        let dunst = Process()
        // -print says what dunst shows; line-buffered, so it reaches the pipe before dunst ends.
        (dunst.executableURL, dunst.arguments) = (
            URL(fileURLWithPath: "/usr/bin/stdbuf"), ["-oL", "/usr/bin/dunst", "-config", settings.path, "-print"]
        )
        dunst.environment = ProcessInfo.processInfo.environment.merging(session) { $1 }
        // A file, not a pipe: the children started after dunst would hold a pipe's end open.
        let printed = server.work.appendingPathComponent("dunst-\(UUID().uuidString).txt")
        _ = FileManager.default.createFile(atPath: printed.path, contents: nil)
        dunst.standardOutput = try FileHandle(forWritingTo: printed)
        dunst.standardError = FileHandle.nullDevice
        try dunst.run()
        func stopDunst() -> String {
            // SIGKILL: Process starts it with this thread's signal mask, which may block SIGTERM.
            if dunst.isRunning { kill(dunst.processIdentifier, SIGKILL) }
            dunst.waitUntilExit()
            return (try? String(contentsOf: printed, encoding: .utf8)) ?? ""
        }
        defer { _ = stopDunst() }
        let watcher = try MessageBus(address: bus.address)
        let deadline = Date().addingTimeInterval(20)
        while !watcher.nameHasOwner("org.freedesktop.Notifications"), Date() < deadline {
            try watcher.addMatch("type='signal',member='NameOwnerChanged'")
            _ = try watcher.nextSignal(timeoutMilliseconds: 200, wakeup: -1)
        }

        let scan = try shopper.ok(["scan", "--replay", walk.path, "--json", "--notify"], session)
        #expect(scan.stderr.isEmpty, "\(scan.stderr)")
        // Wait until dunst has it on screen.
        var displayed = ""
        while displayed != "1", Date() < deadline {
            displayed = try Binary(at: "/usr/bin/dunstctl").run(["count", "displayed"], environment: session).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if displayed != "1" { _ = try watcher.nextSignal(timeoutMilliseconds: 100, wakeup: -1) }
        }
        #expect(displayed == "1")

        let directory = ProcessInfo.processInfo.environment["LOYALTY_SCREENSHOTS"].map { URL(fileURLWithPath: $0) }
            ?? server.work
        let screenshot = directory.appendingPathComponent("offer-notification-dunst.png")
        let shot = try Binary(at: "bash").run([
            "-c", "/usr/bin/xwd -root -silent -display \(display.name) | /usr/bin/convert xwd:- '\(screenshot.path)'",
        ])
        #expect(shot.status == 0, "\(shot.stderr)")
        // The notification's blue on the X server's black, its white text: many colours, not a blank screen.
        let colours = try Binary(at: "/usr/bin/convert").run([screenshot.path, "-format", "%k", "info:"]).stdout
        #expect((Int(colours) ?? 0) > 10, "\(colours)")
        print("NotificationScreenTests: the screen is in \(screenshot.path)")
        let said = stopDunst()
        #expect(said.contains("appname: 'loyalty'") && said.contains("summary: 'Matey's Food Hall: 30% off sushi"), "\(said)")
        #expect(said.contains("category: x-loyalty.offer"), "\(said)")
    }
}

/// Xvfb on a display it chose itself (-displayfd), for as long as this is kept.
final class XServer {
    let name: String
    private let process = Process()

    init() throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/Xvfb")
        process.arguments = ["-displayfd", "1", "-screen", "0", "800x400x24", "-nolisten", "tcp"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var said = ""
        while !said.contains("\n") {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw StoryFailure("Xvfb exited before naming its display") }
            said += String(decoding: chunk, as: UTF8.self)
        }
        name = ":" + said.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)  // as PrivateBus does: SIGTERM may be blocked in it
        process.waitUntilExit()
    }
}
