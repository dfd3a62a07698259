import Foundation
import LoyaltyTesting
import Testing

/// Issue 47 beside bluetoothd, in the same guest as LiveRadioTests (one suite, so one boot): with `bluetoothd -E` the
/// scan registers an advertisement monitor instead of joining the other program's discovery.
extension LiveRadioTests {
    /// bluetoothd -E discovers for `bluetoothctl scan on`, so the scan goes through bluetoothd: it registers a monitor
    /// (bluetoothd's log says so) for the `--region` UUID, the other program then stops discovering, and the
    /// controller is left scanning passively for the monitor, with the scan parameters the kernel took for it (printed
    /// with the duty cycle). A peer advertising an iBeacon of that UUID is entered and ranged, an iBeacon of another
    /// UUID is never ranged (bluetoothd's pattern kept it out), and Eddystone comes through as Device1's ServiceData.
    /// After the scan the monitor is gone and nothing scans.
    @Test func besideBluetoothdWithExperimentalInterfacesTheScanMonitorsPassively() throws {
        guard let guest = guest() else { return }
        try startBluetoothd(guest, experimental: true)
        defer { try? stopBluetoothd(guest) }
        defer { try? guest.peer.stop() }
        let other = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
        for power in ["high", "balanced", "low"] {
            var entries: [Double] = []
            var parameters: [Int] = []
            for run in 0..<(Self.full ? 3 : 1) {
                let discovery = "monitor-discovery-\(power)-\(run)"
                try guest.startInBackground("exec bluetoothctl --timeout 120 scan on", name: discovery)
                try #require(try waitUntil(seconds: 20) { try guest.run("bluetoothctl show | grep -q 'Discovering: yes'").status == 0 })
                if power == "high", run == 0 {
                    let doctor = try guest.run(shell("doctor --json --power low"))
                    #expect(field(doctor, "scan-path", "detail").contains("registers an advertisement monitor"), "\(doctor.stdout)")
                    #expect(
                        field(doctor, "scan-power", "detail").contains("through bluetoothd's advertisement monitor the kernel listens passively"),
                        "\(doctor.stdout)")
                    #expect(field(doctor, "scan-power", "remedy").contains("ScanIntervalAdvMonitor=2240"), "\(doctor.stdout)")
                }
                let name = "scan-monitor-\(power)-\(run)"
                let logged = try guest.run("grep -c 'reserved for Adv Monitor app' /tmp/bluetoothd.log").stdout
                try guest.startInBackground(
                    "exec " + shell("scan --json --snapshot-interval 0.5 --power \(power) --region \(Self.matey)"), name: name)
                let registered = try waitUntil(seconds: 30) {
                    try guest.run("grep -c 'reserved for Adv Monitor app' /tmp/bluetoothd.log").stdout != logged
                }
                let log = try guest.run("tail -20 /tmp/bluetoothd.log").stdout
                #expect(registered, "no monitor registered: \(log)")
                // The other program stops: the kernel goes on scanning for the monitor alone, passively.
                _ = try guest.run("kill $(cat \(guest.resultsPath)/\(discovery).pid)")
                let passive = try waitUntil(seconds: 20) {
                    let state = try guest.peer.guestControllerState()
                    return try state.scanning && guest.peer.guestScanParameters()?.first == 0
                }
                parameters = try guest.peer.guestScanParameters() ?? []
                #expect(passive, "the controller is not scanning passively for the monitor: \(parameters)")
                let started = Date()
                try guest.peer.advertise(Self.iBeacon(major: 8, minor: 1), id: "matey")
                try guest.peer.advertise(Self.iBeacon(other, major: 8, minor: 2), id: "other", address: "D8:D8:D8:D8:D8:D8")
                try guest.peer.advertise(
                    Self.eddystone([0x00, 0xEE] + Self.namespace + Self.instance + [0, 0]), id: "uid", address: "C1:C1:C1:C1:C1:C2")
                #expect(try waitForLine(guest, name, containing: "\"enter\"", seconds: 30))
                entries.append(Date().timeIntervalSince(started))
                try waitForLine(guest, name, containing: "eddystone-uid", seconds: 15)
                sleep(3)
                _ = try guest.run("kill -TERM $(cat \(guest.resultsPath)/\(name).pid)")
                let scan = try guest.background(name, timeout: 30)
                try guest.peer.stop()
                let beacons = rangedBeacons(scan)
                let entered = scan.jsonLines.filter { $0["event"] as? String == "enter" }.compactMap { $0["region"] as? String }
                #expect(entered == [Self.matey], "\(scan.stdout.prefix(600))\(scan.stderr)")
                #expect(beacons.contains { $0["major"] as? Int == 8 && $0["minor"] as? Int == 1 })
                #expect(!beacons.contains { ($0["uuid"] as? String)?.uppercased() == other }, "another UUID came through the pattern")
                #expect(beacons.contains { $0["namespace"] as? String == "00112233445566778899" }, "\(scan.stdout.suffix(600))")
                // Ranged to the end: the found beacon's readings kept coming (every advertisement, or carried forward).
                let last = scan.jsonLines.last { $0["event"] as? String == "range" }
                let lastBeacons = last?["beacons"] as? [[String: Any]] ?? []
                #expect(lastBeacons.contains { $0["minor"] as? Int == 1 && $0["proximity"] as? String != "unknown" }, "\(last ?? [:])")
                #expect(scan.jsonLines.last?["event"] as? String == "summary", "\(scan.stderr)")
                // Unregistered: with no discovery and no monitor the kernel stops scanning.
                #expect(try waitUntil(seconds: 10) { try guest.peer.guestControllerState().scanning == false })
            }
            let sorted = entries.sorted()
            let duty = parameters.count == 3 && parameters[1] > 0 ? Double(parameters[2]) / Double(parameters[1]) * 100 : 0
            print(
                "live check: bluetoothd -E monitor, --power \(power): the controller scanned with type/interval/window "
                    + "\(parameters) (\(String(format: "%.0f", duty)) %), entered after median "
                    + "\(String(format: "%.2f", sorted[sorted.count / 2])) s, worst \(String(format: "%.2f", sorted.last ?? 0)) s "
                    + "of \(entries.count) runs")
        }
    }

    /// Without -E bluetoothd offers no monitor: the scan joins the other program's discovery, which the controller
    /// sees as an active scan whatever `--power` asks, and doctor says so and what would help. Entry is printed.
    @Test func besideBluetoothdWithoutExperimentalInterfacesTheScanJoinsTheActiveDiscoveryAndDoctorSaysSo() throws {
        guard let guest = guest() else { return }
        try startBluetoothd(guest)
        defer { try? stopBluetoothd(guest) }
        defer { try? guest.peer.stop() }
        try guest.startInBackground("exec bluetoothctl --timeout 120 scan on", name: "fallback-discovery")
        defer { _ = try? guest.run("kill $(cat \(guest.resultsPath)/fallback-discovery.pid)") }
        try #require(try waitUntil(seconds: 20) { try guest.run("bluetoothctl show | grep -q 'Discovering: yes'").status == 0 })
        let doctor = try guest.run(shell("doctor --json --power low"))
        #expect(field(doctor, "scan-path", "detail").contains("joins its discovery through D-Bus"), "\(doctor.stdout)")
        #expect(field(doctor, "scan-power", "detail").contains("--power low: listens passively 140.0 ms every 1400 ms (10 %); but through bluetoothd's discovery the scan listens as that discovery does (active"))
        #expect(field(doctor, "scan-power", "remedy").contains("run bluetoothd -E (--experimental) to let the scan use an advertisement monitor"))
        try guest.startInBackground("exec " + shell("scan --json --snapshot-interval 0.5 --power low"), name: "scan-fallback")
        sleep(2)
        let started = Date()
        try guest.peer.advertise(Self.iBeacon(major: 9, minor: 1))
        #expect(try waitForLine(guest, "scan-fallback", containing: "\"enter\"", seconds: 30))
        let entry = Date().timeIntervalSince(started)
        let parameters = try guest.peer.guestScanParameters() ?? []
        _ = try guest.run("kill -TERM $(cat \(guest.resultsPath)/scan-fallback.pid)")
        let scan = try guest.background("scan-fallback", timeout: 30)
        #expect(rangedBeacons(scan).contains { $0["major"] as? Int == 9 }, "\(scan.stdout.suffix(600))\(scan.stderr)")
        // The discovery's scan: active (type 1), whatever --power asked.
        #expect(parameters.first == 1, "\(parameters)")
        #expect(try guest.run("grep -q 'reserved for Adv Monitor app' /tmp/bluetoothd.log").status != 0)
        print(
            "live check: bluetoothd without -E (discovery), --power low: the controller scanned with type/interval/window "
                + "\(parameters), entered after \(String(format: "%.2f", entry)) s")
    }

    /// main.conf's ScanIntervalAdvMonitor and ScanWindowAdvMonitor set the monitor's duty cycle: with `low`'s values the
    /// controller takes them (passive 2240/224), doctor reads them and asks nothing more, and a beacon is still
    /// entered. The scan's wake-ups with a beacon in range are printed for `high` (every advertisement a DeviceFound)
    /// and `low` (found once, then a reading each tick). The guest's main.conf and the kernel's values are restored.
    @Test(.enabled(if: Self.full, "make check"))
    func besideBluetoothdTheMonitorTakesMainConfsDutyCycle() throws {
        guard let guest = guest() else { return }
        let conf = "/etc/bluetooth/main.conf"
        _ = try guest.run("cp \(conf) /tmp/main.conf.saved && printf '[LE]\\nScanIntervalAdvMonitor=2240\\nScanWindowAdvMonitor=224\\n' >> \(conf)")
        defer {
            // The kernel keeps the values bluetoothd loaded: a bluetoothd told the defaults puts them back.
            _ = try? guest.run("cp /tmp/main.conf.saved \(conf)")
            try? stopBluetoothd(guest)
            _ = try? guest.run(
                "printf '[LE]\\nScanIntervalAdvMonitor=96\\nScanWindowAdvMonitor=48\\n' > /tmp/defaults.conf && "
                    + "\(guest.scriptsDirectory.path)/bluetoothd.sh -f /tmp/defaults.conf", timeout: 60)
            try? stopBluetoothd(guest)
        }
        try startBluetoothd(guest, experimental: true)
        defer { try? guest.peer.stop() }
        let discovering = "bluetoothctl show | grep -q 'Discovering: yes'"
        try guest.startInBackground("exec bluetoothctl --timeout 120 scan on", name: "conf-discovery")
        try #require(try waitUntil(seconds: 20) { try guest.run(discovering).status == 0 })
        let doctor = try guest.run(shell("doctor --json --power low"))
        _ = try guest.run("kill $(cat \(guest.resultsPath)/conf-discovery.pid)")
        #expect(
            field(doctor, "scan-power", "detail").contains(
                "the kernel listens passively (no scan requests) 140.0 ms every 1400 ms (10 %, ScanIntervalAdvMonitor and ScanWindowAdvMonitor in /etc/bluetooth/main.conf)"),
            "\(doctor.stdout)")
        #expect(field(doctor, "scan-power", "remedy").isEmpty, "\(doctor.stdout)")
        var wakeups: [String: Double] = [:]
        for power in ["high", "low"] {
            let name = "scan-conf-\(power)"
            // The scan takes bluetoothd's path only while it discovers: another program does, until the monitor is in.
            try guest.startInBackground("exec bluetoothctl --timeout 120 scan on", name: "conf-discovery-\(power)")
            try #require(try waitUntil(seconds: 20) { try guest.run(discovering).status == 0 })
            let logged = try guest.run("grep -c 'reserved for Adv Monitor app' /tmp/bluetoothd.log").stdout
            try guest.startInBackground(
                "exec " + shell("scan --json --power \(power) --region \(Self.matey)") + " >/tmp/\(name).jsonl", name: name)
            #expect(try waitUntil(seconds: 30) {
                try guest.run("grep -c 'reserved for Adv Monitor app' /tmp/bluetoothd.log").stdout != logged
            })
            _ = try guest.run("kill $(cat \(guest.resultsPath)/conf-discovery-\(power).pid)")
            #expect(try waitUntil(seconds: 20) { try guest.peer.guestControllerState().scanning && guest.peer.guestScanParameters() == [0, 2240, 224] })
            let parameters = try guest.peer.guestScanParameters() ?? []
            let started = Date()
            try guest.peer.advertise(Self.iBeacon(major: 8, minor: 3))
            let entered = try waitUntil(seconds: 30) { try guest.run("grep -q '\"enter\"' /tmp/\(name).jsonl").status == 0 }
            #expect(entered)
            let entry = Date().timeIntervalSince(started)
            let switches =
                "cat /proc/$(cat \(guest.resultsPath)/\(name).pid)/task/*/status | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s}'"
            let before = Int(try guest.run(switches).stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            _ = try guest.run("sleep 10")
            let after = Int(try guest.run(switches).stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            wakeups[power] = Double(after - before) / 10
            _ = try guest.run("kill -TERM $(cat \(guest.resultsPath)/\(name).pid)")
            _ = try guest.background(name, timeout: 30)
            try guest.peer.stop()
            print(
                "live check: bluetoothd -E monitor with main.conf 2240/224, --power \(power): the controller scanned with "
                    + "\(parameters), entered after \(String(format: "%.2f", entry)) s, "
                    + "woke \(String(format: "%.1f", wakeups[power] ?? 0)) times a second with the beacon in range")
        }
    }
}
