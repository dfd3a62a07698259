import Arguments
import BeaconRadio
import LoyaltyClient

/// The options of every command that talks to a controller (scan, beacon advertise, beacon calibrate,
/// doctor): `--hci` or `--adapter`, at most one of them, both parsed with the command line, so a name that
/// would make a malformed D-Bus path never reaches the bus.
enum ControllerOptions {
    static let hci = Option<HCITransport>(
        "hci", value: "TRANSPORT",
        help: "The controller: hciN, or an H4 stream: tcp:HOST:PORT, unix:PATH, serial:DEVICE[:BAUD].",
        expected: "hciN, tcp:HOST:PORT, unix:PATH or serial:DEVICE[:BAUD]", parse: HCITransport.init(parsing:))
    static let adapter = Option<String>(
        "adapter", value: "NAME",
        help: "The kernel adapter, like hci0 (default: the first one; doctor checks every one).",
        expected: "an adapter name: hci and a number, like hci0"
    ) { HCITransport.isAdapterName($0) ? $0 : nil }

    static let all: [any DeclaredOption] = [adapter, hci]
    static let exclusive: [[any DeclaredOption]] = [all]

    /// The controller the options name: the first kernel adapter when neither does.
    static func transport(_ arguments: ParsedArguments) -> HCITransport {
        arguments.value(hci) ?? .kernel(arguments.value(adapter))
    }
}
