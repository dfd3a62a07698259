import Beacons
import LoyaltyAPI

let decodeCommand = CommandSpec(
    name: "decode",
    summary: "Decode advertising data or HCI events given as hex, one JSON line per advertisement.",
    synopsis: "[--hci] [--json] HEX...",
    discussion: """
        Without --hci each HEX is advertising data (AD structures, as in a scan record). With --hci each
        HEX is a complete HCI event (LE Advertising Report or LE Extended Advertising Report), with or
        without the leading 04 of H4 framing; each report in it gives a line with "address" and "rssi".
        A beacon prints {"kind":"ibeacon","uuid":...,"major":...,"minor":...,"tx_power":...}; data with
        no beacon prints {"kind":"none"}. Malformed hex or packets: an error on standard error naming the
        argument (its position and first characters: `argument 3 of 1000 ("0201061aff4c0002..."): ...`),
        the other arguments still decoded, and exit code 65. The output is JSON lines with or without
        --json; with --json a malformed argument also prints
        {"kind":"error","argument":3,"input":"0201061aff4c0002...","error":...} in its place.

        EXAMPLE:
          loyalty decode 0201061aff4c0002158f0c1ddc11e54a078910425941b072f900010001c5
        """,
    options: [
        .flag("hci", "Each HEX is an HCI event (H4 framing optional), not advertising data."),
        .flag("json", "JSON lines (what decode always prints), with an error line for each malformed HEX."),
    ],
    run: runDecode
)

private func runDecode(_ arguments: ParsedArguments) throws {
    guard !arguments.positionals.isEmpty else {
        throw UsageError("give at least one HEX string", commandPath: arguments.commandPath)
    }
    var failures = 0
    let count = arguments.positionals.count
    for (index, text) in arguments.positionals.enumerated() {
        // Which of many arguments: its position and its first characters, escaped.
        func fail(_ message: String) {
            failures += 1
            let input = text.count > 24 ? text.prefix(24) + "..." : Substring(text)
            var quoted = JSONLineBuffer(capacity: 64)
            quoted.string(String(input))
            printError("error: argument \(index + 1) of \(count) (\(String(decoding: quoted.bytes, as: UTF8.self))): \(message)")
            if arguments.flag("json") {
                printJSONLine([
                    ("kind", .string("error")), ("argument", .int(index + 1)), ("input", .string(String(input))),
                    ("error", .string(message)),
                ])
            }
        }
        guard let bytes = parseHex(text) else {
            fail("not hex: use pairs of 0-9a-f digits")
            continue
        }
        do {
            let lines = arguments.flag("hci") ? try decodeEvent(bytes) : try decodeAdvertisingData(bytes)
            for line in lines { printJSONLine(line) }
        } catch {
            fail("\(error)")
        }
    }
    if failures > 0 { throw SilentExit(code: ExitCode.dataError) }
}

private func decodeAdvertisingData(_ bytes: [UInt8]) throws(MalformedPacket) -> [[(String, JSONValue)]] {
    let frames = try AdvertisingData.beaconFrames(in: bytes).map(frameFields)
    return frames.isEmpty ? [[("kind", .string("none"))]] : frames
}

private func decodeEvent(_ bytes: [UInt8]) throws(MalformedPacket) -> [[(String, JSONValue)]] {
    var lines: [[(String, JSONValue)]] = []
    for report in try HCIEvent.advertisingReports(inPacket: bytes) {
        let sender: [(String, JSONValue)] = [
            ("address", .string(report.address.description)), ("rssi", .int(Int(report.rssi))),
        ]
        let frames = try AdvertisingData.beaconFrames(in: report.data)
        lines += frames.isEmpty ? [[("kind", .string("none"))] + sender] : frames.map { frameFields($0) + sender }
    }
    return lines.isEmpty ? [[("kind", .string("none"))]] : lines
}
