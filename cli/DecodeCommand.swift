import Arguments
import Beacons
import LoyaltyClient

private let hciEvents = Flag("hci", help: "Each HEX is an HCI event (H4 framing optional), not advertising data.")
private let hexWords = Positional("HEX", .oneOrMore)

let decodeCommand = Command(
    name: "decode",
    summary: "Decode advertising data or HCI events given as hex, one JSON line per advertisement.",
    synopsis: "[--hci]",
    discussion: """
        Without --hci each HEX is advertising data (AD structures, as in a scan record). With --hci each
        HEX is a complete HCI event (LE Advertising Report or LE Extended Advertising Report), with or
        without the leading 04 of H4 framing; each report in it gives a line with "address" and "rssi".
        A beacon prints {"kind":"ibeacon","uuid":...,"major":...,"minor":...,"tx_power":...}; data with
        no beacon prints {"kind":"none"}. Malformed hex or packets: an error line and exit code 65.

        EXAMPLE:
          loyalty decode 0201061aff4c0002158f0c1ddc11e54a078910425941b072f900010001c5
        """,
    options: [hciEvents], positionals: [hexWords],
    run: runDecode
)

private func runDecode(_ arguments: ParsedArguments) throws {
    var failures = 0
    for text in arguments.words(hexWords) {
        guard let bytes = [UInt8](pastedHex: text) else {
            printError("error: '\(text.prefix(40))' is not hex: use pairs of 0-9a-f digits")
            failures += 1
            continue
        }
        do {
            let lines =
                arguments.flag(hciEvents)
                ? try BeaconJSONLines.decoded(event: bytes) : try BeaconJSONLines.decoded(advertisingData: bytes)
            for line in lines { printOut(line) }
        } catch {
            printError("error: \(error)")
            failures += 1
        }
    }
    if failures > 0 { throw SilentExit(code: ExitCode.dataError) }
}
