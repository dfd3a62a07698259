import Arguments
import BeaconRadio
import LoyaltyClient

/// `--hci`, for every command that talks to a controller: scan, beacon advertise, beacon calibrate, doctor.
let hciOption = Option<HCITransport>(
    "hci", value: "TRANSPORT",
    help: "The controller: hciN, or an H4 stream: tcp:HOST:PORT, unix:PATH, serial:DEVICE[:BAUD].",
    parse: HCITransport.init(parsing:))

/// The controller `--hci` or `--adapter` names (the first kernel adapter when neither does). A command reads
/// it before it takes the terminal or the bus: a name that is not `hciN` would be a malformed D-Bus path.
func hciTransport(_ arguments: ParsedArguments, adapter: Option<String>) throws -> HCITransport {
    let transport = try arguments.value(hciOption)
    let name = try arguments.value(adapter)
    if let name, !HCITransport.isAdapterName(name) {
        throw arguments.usageError("--adapter takes an adapter name: hci and a number, like hci0; got '\(name)'")
    }
    if transport != nil, name != nil {
        throw arguments.usageError("--hci and --adapter both name the controller: give one")
    }
    return transport ?? .kernel(name)
}
