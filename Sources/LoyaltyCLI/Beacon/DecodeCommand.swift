import Arguments
import Beacons
import LoyaltyClient

private let hciEvents = Flag("hci", help: "Each HEX is an HCI event (H4 framing optional), not advertising data.")
private let json = Flag("json", help: "JSON lines (what decode always prints), with an error line for each malformed HEX.")
private let hexWords = Positional("HEX", .oneOrMore)

let decodeCommand = Command(
    name: "decode",
    summary: "Decode advertising data or HCI events given as hex, one JSON line per advertisement.",
    discussion: """
        Without --hci each HEX is advertising data (AD structures, as in a scan record). With --hci each
        HEX is a complete HCI event (LE Advertising Report or LE Extended Advertising Report), with or
        without the leading 04 of H4 framing; each report in it gives a line with "address" and "rssi".
        A beacon prints {"kind":"ibeacon","uuid":...,"major":...,"minor":...,"tx_power":...}; an Eddystone
        frame {"kind":"eddystone-uid","namespace":...,"instance":...,"ranging_power":...} (or eddystone-url,
        eddystone-tlm, eddystone-eid: docs/BEACONS.md lists their fields); data with no beacon prints
        {"kind":"none"}. An Eddystone frame the spec does not allow (short, of the wrong length, reserved bits
        set, a reserved URL byte or scheme, an unknown TLM version) is malformed. Malformed hex or packets: an
        error on standard error naming the argument (its position and first characters:
        `argument 3 of 1000 ("0201061aff4c0002..."): ...`), the other arguments still decoded, and exit code 65.
        The output is JSON lines with or without --json; with --json a malformed argument also prints
        {"kind":"error","argument":3,"input":"0201061aff4c0002...","error":...} in its place.

        EXAMPLE:
          loyalty decode 0201061aff4c0002158f0c1ddc11e54a078910425941b072f900010001c5
        """,
    options: [hciEvents, json], positionals: [hexWords],
    run: runDecode
)

private func runDecode(_ arguments: ParsedArguments) throws {
    var failures = 0
    // JSON lines either way; --json adds the error lines.
    let output = CommandScope.output(json: true)
    let words = arguments.words(hexWords)
    for (index, text) in words.enumerated() {
        // Which of many arguments: its position and its first characters, escaped.
        func fail(_ message: String) {
            failures += 1
            let failure = BeaconJSONLines.decodeFailure(text, argument: index + 1, of: words.count, message)
            output.error(failure.error)
            if arguments.flag(json) { output.line(failure.line) }
        }
        guard let bytes = [UInt8](pastedHex: text) else {
            fail("not hex: use pairs of 0-9a-f digits")
            continue
        }
        do {
            let lines =
                arguments.flag(hciEvents)
                ? try BeaconJSONLines.decoded(event: bytes) : try BeaconJSONLines.decoded(advertisingData: bytes)
            lines.forEach(output.line)
        } catch {
            fail("\(error)")
        }
    }
    if failures > 0 { throw SilentExit(code: ExitCode.dataError) }
}
