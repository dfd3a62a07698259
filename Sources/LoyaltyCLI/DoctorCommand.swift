import Arguments
import BeaconRadio
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
        raw HCI, or bluetoothd's D-Bus API while bluetoothd discovers; and advertising (advertise-path).
        Exits 0 when monitoring and ranging are available, 69 when they are not (`loyalty scan --replay
        FILE` works regardless).
        """,
    options: ControllerOptions.all + [Doctor.json], exclusiveOptions: ControllerOptions.exclusive,
    run: runDoctor
)

private func runDoctor(_ arguments: ParsedArguments) throws {
    let diagnosis = RadioDiagnosis.examine(transport: ControllerOptions.transport(arguments))
    let output = CommandScope.output(json: arguments.flag(Doctor.json))
    if output.isJSON {
        let checks = diagnosis.checks.map { check -> JSONValue in
            .object([
                ("name", .string(check.name)),
                ("status", .string(check.status.rawValue)),
                ("detail", .string(check.detail)),
                ("remedy", check.remedy.map(JSONValue.string) ?? .null),
            ])
        }
        output.line(
            JSONValue.object([
                ("monitoring_available", .bool(diagnosis.isMonitoringAvailable)),
                ("ranging_available", .bool(diagnosis.isRangingAvailable)),
                ("checks", .array(checks)),
            ]).text)
    } else {
        diagnosis.reportLines.forEach(output.line)
    }
    if !diagnosis.isMonitoringAvailable {
        throw SilentExit(code: ExitCode.unavailable)
    }
}
