import Foundation
import LoyaltyTesting
import Testing

/// The live radio through the real kernel Bluetooth stack: one guest kernel (GuestRadio) booted for the
/// suite, the built `loyalty` run in it against hci0, and a peer on the same link that advertises and
/// listens. The checks here run in `make test`; `make check` sets LOYALTY_LIVE_RADIO=full for the rest.
@Suite(.serialized) struct LiveRadioTests {
    /// One guest for the whole suite, booted by the first test that needs it; shut down at exit.
    static let booted: Result<GuestRadio, GuestRadioError> = Result { () throws(GuestRadioError) in
        let guest = try GuestRadio()
        atexit { if case .success(let guest) = LiveRadioTests.booted { guest.shutdown() } }
        print("LiveRadioTests: the guest kernel booted in \(String(format: "%.1f", guest.bootSeconds)) s")
        return guest
    }
    static let matey = "8F0C1DDC-11E5-4A07-8910-425941B072F9"
    let loyalty = Binary("loyalty").url.path
    /// `make check` runs the longer checks too: those beside bluetoothd (about 2 minutes together, most of it
    /// bluetoothd starting in the emulated guest).
    static let full = ProcessInfo.processInfo.environment["LOYALTY_LIVE_RADIO"] == "full"

    /// The guest, or nil with the reason recorded. A machine that cannot run it at all fails under CI
    /// and is reported (not failed) elsewhere. A test that got it says so: `make check` counts those lines.
    func guest(_ test: String = #function) -> GuestRadio? { Self.available(Self.booted, test) }

    /// A guest of the test's own, booted for it (shut down when it is released): its kernel has loaded no
    /// Bluetooth yet, whatever the suite's other tests did.
    func freshGuest(_ test: String = #function) -> GuestRadio? {
        Self.available(Result { () throws(GuestRadioError) in try GuestRadio() }, test)
    }

    private static func available(_ booted: Result<GuestRadio, GuestRadioError>, _ test: String) -> GuestRadio? {
        switch booted {
        case .success(let guest):
            print("live check ran: \(test)")
            return guest
        case .failure(.unavailable(let reason)) where !runningUnderCI:
            print("LiveRadioTests not run: \(reason)")
            return nil
        case .failure(let error):
            Issue.record("\(error)")
            return nil
        }
    }

    /// iBeacon advertising data: flags, then Apple's manufacturer data with UUID, major, minor, power.
    static func iBeacon(_ uuid: String = matey, major: UInt16, minor: UInt16, power: Int8 = -59) -> [UInt8] {
        let uuidBytes = withUnsafeBytes(of: UUID(uuidString: uuid)!.uuid) { Array($0) }
        return [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + uuidBytes
            + [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF), UInt8(bitPattern: power)]
    }

    /// `loyalty` in the guest with a scratch home there, as a line of shell.
    func shell(_ arguments: String) -> String {
        "env LOYALTY_HOME=/tmp/loyalty-home LOYALTY_SERVER=http://127.0.0.1:9 \(loyalty) \(arguments)"
    }

    /// hci0 attached and up, with the feature set asked for and nothing advertising.
    func ready(_ guest: GuestRadio, extended: Bool = true) throws {
        if try guest.run("test -e /sys/class/bluetooth/hci0").status != 0 { try guest.attachController() }
        #expect(try guest.run("hciconfig hci0 up").status == 0)
        try guest.peer.setGuestExtendedAdvertising(extended)
        try guest.peer.stop()
    }

    /// In a guest of its own, so that every stage is checked: no Bluetooth in the kernel, no adapter, an
    /// adapter down, then up with each feature set.
    @Test func doctorSaysWhatIsMissingAtEachStageAndWhichScanPathItTakes() throws {
        guard let guest = freshGuest() else { return }
        defer { guest.shutdown() }
        // No Bluetooth in the kernel: the module cannot be loaded (socket() would load it on demand).
        #expect(try guest.run("lsmod | grep -q '^bluetooth '").status != 0, "a fresh guest has Bluetooth loaded")
        let blocked = try guest.run("echo /bin/false > /proc/sys/kernel/modprobe; " + shell("doctor --json"))
        #expect(blocked.status == 69, "\(blocked.stdout)\(blocked.stderr)")
        #expect(field(blocked, "kernel", "status") == "failed")
        #expect(field(blocked, "kernel", "remedy").contains("modprobe bluetooth"))
        // The kernel's Bluetooth, no controller attached yet.
        _ = try guest.run("echo /sbin/modprobe > /proc/sys/kernel/modprobe; modprobe bluetooth")
        #expect(try guest.run("test -e /sys/class/bluetooth/hci0").status != 0, "a fresh guest has hci0")
        let noAdapter = try guest.run(shell("doctor --json"))
        #expect(noAdapter.status == 69)
        #expect(field(noAdapter, "kernel", "status") == "ok")
        #expect(field(noAdapter, "adapter", "status") == "failed")
        try ready(guest)
        let down = try guest.run("hciconfig hci0 down && " + shell("doctor --json"))
        #expect(down.status == 69)
        #expect(field(down, "adapter", "detail").contains("hci0 is not up"))
        #expect(field(down, "adapter", "remedy").contains("hciconfig hci0 up"))

        try ready(guest, extended: true)
        let extended = try guest.run(shell("doctor --json"))
        #expect(extended.status == 0, "\(extended.stdout)\(extended.stderr)")
        // Not `bluetoothctl show`: with the system bus up and no bluetoothd it waits for one forever.
        if try guest.run("pidof bluetoothd >/dev/null").status != 0 {
            #expect(field(extended, "scan-path", "detail").contains("no bluetoothd on the system bus: a scan programs the controller over raw HCI"))
            #expect(field(extended, "advertise-path", "detail").contains("no bluetoothd manages hci0: advertising programs the controller over raw HCI"))
        }
        #expect(field(extended, "le-features", "detail").contains("extended commands"))

        try ready(guest, extended: false)
        let legacy = try guest.run(shell("doctor --json"))
        #expect(legacy.status == 0)
        #expect(field(legacy, "le-features", "detail").contains("legacy commands"))
    }

    @Test(arguments: [false, true])
    func scanRangesTheBeaconWithTheCommandsItsFeaturesAllowAndSIGTERMEndsWithTheSummary(extended: Bool) throws {
        guard let guest = guest() else { return }
        try ready(guest, extended: extended)
        try guest.peer.advertise(Self.iBeacon(major: 1, minor: 2), kind: .legacy, rssi: -59)
        defer { try? guest.peer.stop() }
        try guest.startInBackground("exec " + shell("scan --json --snapshot-interval 0.5"), name: "scan-term")
        let scanning = try waitUntil(seconds: 30) { try guest.peer.guestControllerState().scanning }
        #expect(scanning)
        #expect(try guest.peer.guestControllerState().scanCommands == (extended ? "extended" : "legacy"))
        try waitForLine(guest, "scan-term", containing: "\"range\"", seconds: 30)
        _ = try guest.run("kill -TERM $(cat \(guest.resultsPath)/scan-term.pid)")
        let scan = try guest.background("scan-term", timeout: 30)
        let lines = scan.jsonLines
        let entered = lines.contains { line in
            line["event"] as? String == "enter" && (line["region"] as? String)?.contains(Self.matey) == true
        }
        #expect(entered)
        let ranged = rangedBeacons(scan).contains { beacon in
            beacon["major"] as? Int == 1 && beacon["minor"] as? Int == 2 && beacon["rssi"] as? Double == -59
        }
        #expect(ranged)
        #expect(lines.last?["event"] as? String == "summary", "\(scan.stdout.suffix(400))\(scan.stderr)")
        // Left as found: the controller is not scanning any more.
        #expect(try guest.peer.guestControllerState().scanning == false)
    }

    /// Issue 47, through the kernel's raw HCI path: each `--power` asks the controller for a passive scan with the
    /// profile's interval and window, and a beacon advertising every 100 ms is entered though the controller (the
    /// peer's model of it) hears it only inside those windows; with nothing in range the scan wakes about once a
    /// second. The figures are printed, not asserted (the targets are `make bench`'s): entry times include the 9p
    /// share's polling, and the guest runs emulated.
    @Test(arguments: [("high", [0, 16, 16]), ("balanced", [0, 1168, 292]), ("low", [0, 2240, 224])])
    func aDutyCycledScanIsPassiveWithTheProfilesWindowsAndEnters(power: String, parameters: [Int]) throws {
        guard let guest = guest() else { return }
        try ready(guest)
        defer { try? guest.peer.stop() }
        if Self.full {
            // Nothing advertises: the scan's voluntary context switches over 10 quiet seconds. Its output goes to the
            // guest's tmpfs: a write to the results share (9p) blocks, and would count as a wake-up of its own.
            let quiet = "quiet-\(power)"
            try guest.startInBackground("exec " + shell("scan --json --power \(power)") + " >/tmp/\(quiet).jsonl", name: quiet)
            #expect(try waitUntil(seconds: 30) { try guest.peer.guestControllerState().scanning })
            let switches =
                "cat /proc/$(cat \(guest.resultsPath)/\(quiet).pid)/task/*/status | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s}'"
            let before = Int(try guest.run(switches).stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            _ = try guest.run("sleep 10")
            let after = Int(try guest.run(switches).stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            print("live check: --power \(power) woke \(String(format: "%.2f", Double(after - before) / 10)) times a second with nothing in range")
            _ = try guest.run("kill -TERM $(cat \(guest.resultsPath)/\(quiet).pid)")
            _ = try guest.background(quiet, timeout: 30)
        }
        var entries: [Double] = []
        for run in 0..<(Self.full ? 5 : 1) {
            let name = "scan-\(power)-\(run)"
            try guest.startInBackground("exec " + shell("scan --json --power \(power)"), name: name)
            #expect(try waitUntil(seconds: 30) { try guest.peer.guestControllerState().scanning })
            #expect(try guest.peer.guestScanParameters() == parameters)
            let started = Date()
            try guest.peer.advertise(Self.iBeacon(major: 4, minor: 7), kind: .legacy)
            #expect(try waitForLine(guest, name, containing: "\"enter\"", seconds: 30))
            entries.append(Date().timeIntervalSince(started))
            _ = try guest.run("kill -TERM $(cat \(guest.resultsPath)/\(name).pid)")
            let scan = try guest.background(name, timeout: 30)
            #expect(scan.jsonLines.contains { $0["event"] as? String == "enter" }, "\(scan.stdout.suffix(400))\(scan.stderr)")
            #expect(try guest.peer.guestControllerState().scanning == false)
            try guest.peer.stop()
        }
        let sorted = entries.sorted()
        print(
            "live check: --power \(power) entered after median \(String(format: "%.2f", sorted[sorted.count / 2])) s, worst "
                + "\(String(format: "%.2f", sorted.last ?? 0)) s of \(entries.count) runs")
    }

    @Test func aBeaconThatGoesQuietBecomesUnknownAndItsRegionIsExitedWhileNothingIsHeard() throws {
        guard let guest = guest() else { return }
        try ready(guest)
        try guest.peer.advertise(Self.iBeacon(major: 2, minor: 1), kind: .legacy)
        defer { try? guest.peer.stop() }
        try guest.startInBackground(
            "exec " + shell("scan --json --snapshot-interval 0.5 --tracking-age 2 --exit-timeout 4"), name: "scan-quiet")
        try waitForLine(guest, "scan-quiet", containing: "\"enter\"", seconds: 30)
        try guest.peer.stop()
        let exited = try waitForLine(guest, "scan-quiet", containing: "\"exit\"", seconds: 20)
        _ = try guest.run("kill -INT $(cat \(guest.resultsPath)/scan-quiet.pid)")
        let scan = try guest.background("scan-quiet", timeout: 30)
        #expect(exited, "no exit while nothing was heard: \(scan.stdout.suffix(600))")
        let proximities = rangedBeacons(scan).compactMap { $0["proximity"] as? String }
        #expect(proximities.last == "unknown", "\(proximities.suffix(5))")
        #expect(scan.jsonLines.last?["event"] as? String == "summary")
        #expect(try guest.peer.guestControllerState().scanning == false)
    }

    @Test(arguments: [false, true])
    func beaconAdvertiseIsHeardByteExactByThePeer(extended: Bool) throws {
        guard let guest = guest() else { return }
        try ready(guest, extended: extended)
        let since = try guest.peer.heard().next
        let advertised = try guest.run(
            shell("beacon advertise --uuid \(Self.matey) --major 1 --minor 2 --measured-power -61 --duration 2"),
            timeout: 60)
        #expect(advertised.status == 0, "\(advertised.stderr)")
        let heard = try guest.peer.heard(since: since).pdus
        let expected = Self.iBeacon(major: 1, minor: 2, power: -61)
        #expect(!heard.isEmpty)
        #expect(heard.allSatisfy { $0.data == expected }, "\(heard.prefix(3))")
        #expect(Set(heard.map(\.kind)) == [extended ? "ADV_EXT_IND" : "ADV_NONCONN_IND"])
        #expect(try guest.peer.guestControllerState().advertising == false)
    }

    @Test func beaconCalibrateMeasuresThePeersPowerAtOneMetre() throws {
        guard let guest = guest() else { return }
        try ready(guest)
        try guest.peer.advertise(Self.iBeacon(major: 1, minor: 1, power: -59), rssi: -63)
        defer { try? guest.peer.stop() }
        let calibrated = try guest.run(
            shell("beacon calibrate \(Self.matey):1:1 --seconds 3 --min-samples 5 --json"),
            timeout: 60)
        #expect(calibrated.status == 0, "\(calibrated.stdout)\(calibrated.stderr)")
        let result = try #require(calibrated.jsonLines.first)
        #expect(result["measured_power"] as? Int == -63, "\(result)")
    }

    /// Beside bluetoothd while it discovers (`bluetoothctl scan on`): our scan ranges the beacon, our
    /// advertising is heard, and afterwards bluetoothd still hears new advertisers: its discovery was left alive.
    @Test(.enabled(if: Self.full, "make check"))
    func besideBluetoothdTheScanRangesAndBluetoothdKeepsDiscovering() throws {
        guard let guest = guest() else { return }
        try startBluetoothd(guest)
        defer { try? stopBluetoothd(guest) }
        try guest.startInBackground("exec bluetoothctl --timeout 90 scan on", name: "discovery")
        defer { _ = try? guest.run("kill $(cat \(guest.resultsPath)/discovery.pid)") }
        let discovering = try waitUntil(seconds: 20) {
            try guest.run("bluetoothctl show | grep -q 'Discovering: yes'").status == 0
        }
        try #require(discovering)
        let doctor = try guest.run(shell("doctor --json"))
        #expect(field(doctor, "scan-path", "detail").contains("joins its discovery through D-Bus"))
        // Without -E: no advertisement monitor, and doctor says what would give one.
        #expect(field(doctor, "scan-power", "detail").contains("through bluetoothd's discovery the scan listens as that discovery does (active"))
        #expect(field(doctor, "scan-power", "remedy").contains("run bluetoothd -E (--experimental) to let the scan use an advertisement monitor"))
        try guest.peer.advertise(Self.iBeacon(major: 3, minor: 1))
        defer { try? guest.peer.stop() }
        let scan = try liveScan(guest, "scan-beside", "", until: "\"range\"", thenSeconds: 2)
        let ranged = rangedBeacons(scan).contains { $0["major"] as? Int == 3 }
        #expect(ranged, "\(scan.stdout.suffix(600))\(scan.stderr)")

        // Advertising beside it: registered with bluetoothd, heard (after the kernel's Flags structure).
        let since = try guest.peer.heard().next
        let advertised = try guest.run(
            shell("beacon advertise --uuid \(Self.matey) --major 3 --minor 9 --duration 2"), timeout: 60)
        #expect(advertised.status == 0, "\(advertised.stderr)")
        #expect(advertised.stdout.contains("(through bluetoothd)"), "\(advertised.stdout)")
        let ibeacon = Array(Self.iBeacon(major: 3, minor: 9).dropFirst(3))
        #expect(try guest.peer.heard(since: since).pdus.contains { Self.structures($0.data).contains(ibeacon) })

        // A new advertiser after our scan and advertising: bluetoothd must still be discovering to hear it.
        try guest.peer.advertise([0x02, 0x01, 0x06, 0x05, 0xFF, 0xFF, 0xFF, 0x01, 0x02], id: "new", address: "D1:D1:D1:D1:D1:D1")
        let heardAfter = try waitUntil(seconds: 15) {
            try guest.run("bluetoothctl devices | grep -q D1:D1:D1:D1:D1:D1").status == 0
        }
        #expect(heardAfter, "bluetoothd's discovery died with our scan")
        #expect(try guest.peer.guestControllerState().scanning)
    }

    /// Beside bluetoothd discovering for one other program (`bluetoothctl scan on`), whose peer's minor changes:
    /// bluetoothd reports each change before our scan and still after it. BlueZ keeps a client's discovery
    /// filter after its StopDiscovery, and when that client leaves the bus it stops the adapter's discovery if
    /// exactly one other client discovers (src/adapter.c, discovery_disconnect): the scan clears its filter.
    @Test func besideBluetoothdItsDiscoveryStillReportsChangesAfterOurScan() throws {
        guard let guest = guest() else { return }
        try startBluetoothd(guest)
        defer { try? stopBluetoothd(guest) }
        try guest.startInBackground("exec bluetoothctl --timeout 120 scan on", name: "discovery-changes")
        defer { _ = try? guest.run("kill $(cat \(guest.resultsPath)/discovery-changes.pid)") }
        try #require(try waitUntil(seconds: 20) { try guest.run("bluetoothctl show | grep -q 'Discovering: yes'").status == 0 })
        defer { try? guest.peer.stop() }
        // bluetoothd's copy of the peer's manufacturer data: major 6, then the minor, then -59 dBm (0xc5).
        func reported(minor: UInt8) throws -> Bool {
            try guest.peer.advertise(Self.iBeacon(major: 6, minor: UInt16(minor)))
            return try waitUntil(seconds: 20) {
                try guest.run("bluetoothctl info C1:C1:C1:C1:C1:C1 | grep -q '00 06 00 \(String(format: "%02x", minor)) c5'")
                    .status == 0
            }
        }
        #expect(try reported(minor: 11), "bluetoothd did not report the change before our scan")
        let scan = try liveScan(guest, "scan-changes", "", until: "\"range\"", thenSeconds: 5)
        #expect(rangedBeacons(scan).contains { $0["major"] as? Int == 6 }, "\(scan.stdout.suffix(600))\(scan.stderr)")
        // Not even for a moment: before the fix, "no" for about a second after the scan (then on again here; it
        // stays off when bluetoothd gets its Stop Discovery's answer before the kernel's Discovering event).
        var states: [String] = []
        for _ in 0..<8 {
            states.append(try guest.run("bluetoothctl show | grep -o 'Discovering: [a-z]*' | head -1").stdout)
            usleep(200_000)
        }
        #expect(states.allSatisfy { $0.contains("Discovering: yes") }, "\(states)")
        #expect(try reported(minor: 12), "bluetoothd's discovery stopped with our scan")
        #expect(try reported(minor: 13))
    }

    /// Beside an idle bluetoothd the scan takes raw HCI (through bluetoothd it would get one reading per
    /// discovery) and keeps ranging a beacon that keeps advertising: it never turns unknown; bluetoothd is
    /// not left discovering.
    @Test(.enabled(if: Self.full, "make check"))
    func besideAnIdleBluetoothdTheScanKeepsRanging() throws {
        guard let guest = guest() else { return }
        try startBluetoothd(guest)
        defer { try? stopBluetoothd(guest) }
        try guest.peer.advertise(Self.iBeacon(major: 3, minor: 2))
        defer { try? guest.peer.stop() }
        let scan = try liveScan(guest, "scan-idle", "--tracking-age 2", until: "\"range\"", thenSeconds: 6)
        let proximities = rangedBeacons(scan).compactMap { $0["proximity"] as? String }
        #expect(proximities.count >= 8 && !proximities.contains("unknown"), "\(scan.stdout.suffix(600))")
        #expect(try guest.run("bluetoothctl show | grep -q 'Discovering: no'").status == 0)
    }

    /// Another raw scanner was scanning (hcitool lescan): ours pauses it, and afterwards the controller is
    /// scanning again and that program hears a new advertiser. hcitool speaks the legacy commands, which a
    /// controller does not mix with the extended ones: the controller here is legacy-only.
    @Test
    func aScanAlreadyRunningIsResumedAfterOurs() throws {
        guard let guest = guest() else { return }
        try ready(guest, extended: false)
        try stopBluetoothd(guest)
        try guest.startInBackground("exec hcitool -i hci0 lescan --passive --duplicates", name: "lescan")
        defer { _ = try? guest.run("kill -INT $(cat \(guest.resultsPath)/lescan.pid)") }
        #expect(try waitUntil(seconds: 20) { try guest.peer.guestControllerState().scanning })
        try guest.peer.advertise(Self.iBeacon(major: 5, minor: 1))
        defer { try? guest.peer.stop() }
        let scan = try liveScan(guest, "scan-resume", "", until: "\"range\"", thenSeconds: 1)
        #expect(rangedBeacons(scan).contains { $0["major"] as? Int == 5 })
        #expect(try guest.peer.guestControllerState().scanning)
        try guest.peer.advertise([0x02, 0x01, 0x06], id: "new", address: "D5:D5:D5:D5:D5:D5")
        let heard = try waitUntil(seconds: 15) {
            ((try? String(contentsOfFile: "\(guest.resultsPath)/lescan.out", encoding: .utf8)) ?? "")
                .contains("D5:D5:D5:D5:D5:D5")
        }
        #expect(heard, "the other program's scan stayed off after ours")
    }

    /// `--region` live: only the monitored region's beacon enters, although another UUID is heard too.
    @Test
    func regionConstraintsHoldLive() throws {
        guard let guest = guest() else { return }
        try ready(guest)
        let other = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        try guest.peer.advertise(Self.iBeacon(major: 4, minor: 1), id: "matey")
        try guest.peer.advertise(Self.iBeacon(other, major: 4, minor: 1), id: "other", address: "D2:D2:D2:D2:D2:D2")
        defer { try? guest.peer.stop() }
        let scan = try liveScan(guest, "scan-region", "--region \(Self.matey):4", until: "\"enter\"", thenSeconds: 2)
        let regions = scan.jsonLines.filter { $0["event"] as? String == "enter" }.compactMap { $0["region"] as? String }
        #expect(regions == ["\(Self.matey):4"], "\(scan.stdout.prefix(600))")
    }

    /// A controller that refuses every LE command, or never answers: scan and advertise end at once with
    /// exit 69 and the command named, never a crash or a hang.
    @Test(arguments: ["error", "silent"])
    func aBrokenControllerIsAClearErrorNeverAHang(mode: String) throws {
        guard let guest = guest() else { return }
        try ready(guest)
        try guest.peer.setGuestMisbehaviour(mode)
        defer { try? guest.peer.setGuestMisbehaviour(nil) }
        let expected =
            mode == "error" ? "refused command 0x2003 with HCI error 0x0003" : "did not answer command 0x2003"
        for command in ["scan --json", "beacon advertise --uuid \(Self.matey) --major 1 --minor 1 --duration 1"] {
            // A hang is killed (status 137), which the status expectation reports.
            let result = try guest.run("timeout -s KILL 40 " + shell(command), timeout: 60)
            #expect(result.status == 69, "\(command): \(result.stderr)")
            #expect(result.stderr.contains(expected), "\(command): \(result.stderr)")
        }
    }

    /// The shopper's story live: a synced catalog, the beacon advertised, its offer shown once; with a
    /// fixed position the geofences run beside the radio instead of replacing it.
    @Test(arguments: [nil, "fixed:51.5007,-0.1246"])
    func scanShowsTheAdvertisedBeaconsOfferOnce(location: String?) throws {
        guard let guest = guest() else { return }
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let store = try server.retailer("Live shop \(location ?? "by radio")", uuid: uuid)
        try store.setOffer(1, 1, "Not advertised", [])
        try store.setOffer(1, 2, "Advertised here", [])
        let shopper = try server.newAccount()
        try shopper.ok(["sync", "--all"])
        // The guest's /tmp is its own: the synced home goes over the results share.
        let home = "\(guest.resultsPath)/home-\(UUID().uuidString)"
        try FileManager.default.copyItem(atPath: shopper.home.path, toPath: home)
        try ready(guest)
        try guest.peer.advertise(Self.iBeacon(uuid, major: 1, minor: 2), rssi: -55)
        defer { try? guest.peer.stop() }
        let name = "story-\(location == nil ? "radio" : "fixed")"
        let options = location.map { " --location \($0)" } ?? ""
        try guest.startInBackground(
            "cp -a \(home) /tmp/\(name) && exec env LOYALTY_HOME=/tmp/\(name) LOYALTY_SERVER=http://127.0.0.1:9 "
                + "\(loyalty) scan --json --offline --snapshot-interval 0.5\(options)", name: name)
        try waitForLine(guest, name, containing: "\"offer\"", seconds: 30)
        // Heard for a while longer: the offer still shows only once.
        sleep(3)
        _ = try guest.run("kill -TERM $(cat \(guest.resultsPath)/\(name).pid)")
        let scan = try guest.background(name, timeout: 30)
        let offers = scan.jsonLines.filter { $0["event"] as? String == "offer" }
            .compactMap { ($0["offer"] as? [String: Any])?["title"] as? String }
        #expect(offers == ["Advertised here"], "\(scan.stdout.suffix(800))\(scan.stderr)")
        #expect(scan.jsonLines.contains { $0["event"] as? String == "range" })
        #expect(!scan.stderr.contains("beacons are off"), "\(scan.stderr)")
        #expect(scan.jsonLines.last?["event"] as? String == "summary")
    }

    // MARK: helpers

    /// A field of the check named `name` in `doctor --json`'s answer; "" when missing.
    func field(_ result: GuestCommandResult, _ name: String, _ key: String) -> String {
        let checks = result.jsonLines.first?["checks"] as? [[String: Any]] ?? []
        return checks.first { $0["name"] as? String == name }?[key] as? String ?? ""
    }

    /// hci0 ready, with the system bus and bluetoothd managing it; the kernel reads the controller's features
    /// afresh (hci0 down and up), so with `extended` false it advertises with the legacy commands.
    /// `experimental`: bluetoothd -E, which offers AdvertisementMonitorManager1.
    func startBluetoothd(_ guest: GuestRadio, extended: Bool = true, experimental: Bool = false) throws {
        try ready(guest, extended: extended)
        #expect(try guest.run("hciconfig hci0 down && hciconfig hci0 up").status == 0)
        let daemon = try guest.run("\(guest.scriptsDirectory.path)/bluetoothd.sh\(experimental ? " -E" : "")", timeout: 60)
        try #require(daemon.status == 0, "\(daemon.stdout)")
    }

    /// No bluetoothd in the guest (the other tests expect none).
    func stopBluetoothd(_ guest: GuestRadio) throws {
        let stopped = try guest.run(
            "pid=$(pidof bluetoothd) || exit 0; kill $pid; for _ in $(seq 50); do kill -0 $pid 2>/dev/null || exit 0; sleep 0.1; done; exit 1")
        try #require(stopped.status == 0, "bluetoothd did not stop")
    }

    /// Polls `condition` every 0.2 s for up to `seconds`.
    func waitUntil(seconds: Double, _ condition: () throws -> Bool) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            usleep(200_000)
        }
        return false
    }

    /// `loyalty scan ARGUMENTS` in the guest's background until it printed `text`, `seconds` more, then SIGTERM
    /// (or `signal`); its output.
    private func liveScan(
        _ guest: GuestRadio, _ name: String, _ arguments: String, until text: String, thenSeconds seconds: UInt32,
        signal: String = "TERM"
    ) throws -> GuestCommandResult {
        try guest.startInBackground("exec " + shell("scan --json --snapshot-interval 0.5 " + arguments), name: name)
        try waitForLine(guest, name, containing: text, seconds: 30)
        sleep(seconds)
        _ = try guest.run("kill -\(signal) $(cat \(guest.resultsPath)/\(name).pid)")
        return try guest.background(name, timeout: 30)
    }

    /// The `range` lines' beacons.
    func rangedBeacons(_ scan: GuestCommandResult) -> [[String: Any]] {
        scan.jsonLines.filter { $0["event"] as? String == "range" }.flatMap { $0["beacons"] as? [[String: Any]] ?? [] }
    }

    /// Waits for a line containing `text` in a background command's output; whether it came.
    @discardableResult
    func waitForLine(_ guest: GuestRadio, _ name: String, containing text: String, seconds: Double) throws -> Bool {
        try waitUntil(seconds: seconds) {
            ((try? String(contentsOfFile: "\(guest.resultsPath)/\(name).out", encoding: .utf8)) ?? "").contains(text)
        }
    }
}
