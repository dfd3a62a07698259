import Arguments
import BeaconRadio
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

private enum Doctor {
    static let json = Flag("json", help: "Print one JSON object instead of text.")
}

let doctorCommand = Command(
    name: "doctor",
    summary: "Say what this machine supports for beacon scanning, and what to do about what is missing.",
    discussion: """
        Checks kernel Bluetooth support (AF_BLUETOOTH), adapters, the capabilities a live scan needs
        (CAP_NET_RAW, CAP_NET_ADMIN) and the controller's LE features, and says which path a scan takes:
        raw HCI, or bluetoothd's D-Bus API while bluetoothd discovers (an advertisement monitor where
        bluetoothd offers one, `bluetoothd -E`, else its discovery); and advertising (advertise-path).
        scan-power says the duty cycle a scan asks for (--power, else the config's scan_power, else
        LOYALTY_SCAN_POWER_DEFAULT, else high) and what the path gives: through a monitor, the kernel's
        passive scan for monitors (ScanIntervalAdvMonitor and ScanWindowAdvMonitor of
        /etc/bluetooth/main.conf, else the kernel's 30 ms every 60 ms) and the lines that match the
        profile; through bluetoothd's discovery, that the scan listens as bluetoothd does (active) and
        what is missing for passive listening there.
        Exits 0 when monitoring and ranging are available, 69 when they are not (`loyalty scan --replay
        FILE` works regardless). Then, as advice that does not change the exit status: whether a
        notification server answers on the session bus (scan --notify), and what the scan as a systemd
        user service (loyalty-scan) has to reach the radio: systemd --user grants no capabilities, so
        the program needs them as file capabilities (setcap), or, beside a bluetoothd that discovers,
        BlueZ's D-Bus policy (the `bluetooth` group); and whether the service answers (secure-beacons):
        secure beacons' identities rotate and only the service resolves them, so without it their offers
        wait until the next sync.
        """,
    options: ControllerOptions.all + [ScanOptions.power, Doctor.json], exclusiveOptions: ControllerOptions.exclusive,
    run: runDoctor
)

private func runDoctor(_ arguments: ParsedArguments) throws {
    let transport = ControllerOptions.transport(arguments)
    var diagnosis = RadioDiagnosis.examine(transport: transport)
    if diagnosis.checks.contains(where: { $0.name == "scan-path" }) {
        diagnosis.checks.append(RadioDiagnosis.scanPower(try scanPower(arguments), transport: transport))
    }
    let desktop = RadioDiagnosis(checks: DesktopDiagnosis.checks(radio: diagnosis))
    let output = CommandScope.output(json: arguments.flag(Doctor.json))
    if output.isJSON {
        func json(_ checks: [RadioDiagnosis.Check]) -> JSONValue {
            .array(
                checks.map { check -> JSONValue in
                    .object([
                        ("name", .string(check.name)),
                        ("status", .string(check.status.rawValue)),
                        ("detail", .string(check.detail)),
                        ("remedy", check.remedy.map(JSONValue.string) ?? .null),
                    ])
                })
        }
        output.line(
            JSONValue.object([
                ("monitoring_available", .bool(diagnosis.isMonitoringAvailable)),
                ("ranging_available", .bool(diagnosis.isRangingAvailable)),
                ("checks", json(diagnosis.checks)),
                // Notifications and the user service: advice that does not decide the exit status.
                ("desktop_checks", json(desktop.checks)),
            ]).text)
    } else {
        diagnosis.reportLines.forEach(output.line)
        desktop.reportLines.dropLast().forEach(output.line)  // its last line is the radio's verdict
    }
    if !diagnosis.isMonitoringAvailable {
        throw SilentExit(code: ExitCode.unavailable)
    }
}
