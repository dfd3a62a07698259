import Arguments
import BeaconRadio
import Beacons
import Foundation
import LoyaltyAPI
import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

private enum Advertise {
    static let uuid = Option<UUID>.uuid("uuid", help: "The proximity UUID (the retailer's).", required: true)
    static let major = number("major", value: "M", help: "Major, 0...65535 (a department).")
    static let minor = number("minor", value: "N", help: "Minor, 0...65535 (the beacon in it).")
    static let measuredPower = Option<Int8>(
        "measured-power", value: "DBM", help: "RSSI at 1 m to advertise, -100...0 (default -59; see `beacon calibrate`).",
        expected: "a whole number of dBm, -100...0"
    ) { Int8($0).flatMap { (-100...0).contains($0) ? $0 : nil } }
    static let interval = Option<Double>(
        "interval-ms", value: "MS", help: "Advertising interval, 20...10240 ms in 0.625 ms steps (default 100).",
        expected: "a number of milliseconds") { Double($0) }
    static let duration = Option<Double>.seconds(
        "duration", help: "Stop after this many seconds (default: until Ctrl-C or SIGTERM).")
    static let dryRun = Flag("dry-run", help: "Print the HCI commands instead of sending them.")
    static let write = Option<String>(
        "write", value: "FILE", help: "Write the HCI commands and the report a scanner receives to a BTSnoop file.")
    static let extended = Flag(
        "extended", help: "With --dry-run or --write: the extended advertising commands instead of the legacy ones.")
    static let json = Flag("json", help: "JSON lines.")

    private static func number(_ name: String, value: String, help: String) -> Option<UInt16> {
        Option(name, value: value, help: help, required: true, expected: "a whole number 0...65535") { UInt16($0) }
    }
}

let advertiseCommand = Command(
    name: "advertise",
    summary: "Make this machine an iBeacon: advertise a UUID, major and minor with a measured power.",
    discussion: """
        Programs the adapter with LE Set Advertising Parameters, LE Set Advertising Data (flags and the
        iBeacon manufacturer data) and LE Set Advertising Enable, or their LE Extended Advertising
        counterparts when the controller's LE features include it, as non-connectable undirected
        advertising (ADV_NONCONN_IND) on channels 37, 38 and 39. Advertising stops, and is disabled on the
        controller, at Ctrl-C, SIGTERM or the end of --duration. Everything is checked before the radio is
        touched. Live advertising needs an adapter and CAP_NET_RAW + CAP_NET_ADMIN (`loyalty doctor`).
        Some controllers older than Bluetooth 5.0 refuse non-connectable intervals under 100 ms. When
        bluetoothd manages the adapter, the beacon is registered with its LEAdvertisingManager1 instead
        (a broadcast advertisement beside other programs'; no capabilities needed) and unregistered at the end.

        --dry-run prints the HCI commands instead of sending them, each with its name and its bytes
        (opcode, parameter length, parameters; hex). --write FILE writes them to a BTSnoop capture
        (datalink 1002), with the LE Advertising Report a scanner 1 m away would receive (RSSI = measured
        power; the advertiser's address shows as 00:00:00:00:00:00, since the adapter is not read), so
        `loyalty scan --replay FILE` hears exactly this beacon. Neither touches the radio; both show the
        legacy commands unless --extended is given.

        EXAMPLES:
          loyalty beacon advertise --uuid 8F0C1DDC-11E5-4A07-8910-425941B072F9 --major 1 --minor 2
          loyalty beacon advertise --uuid 8F0C1DDC-11E5-4A07-8910-425941B072F9 --major 1 --minor 2 --dry-run

        EXIT CODES: 0 done, 64 wrong arguments, 69 no radio, 74 FILE not written, 77 missing capabilities or a
        system bus that refuses this user.
        """,
    options: [
        Advertise.uuid, Advertise.major, Advertise.minor, Advertise.measuredPower, Advertise.interval,
    ] + ControllerOptions.all + [Advertise.duration, Advertise.dryRun, Advertise.write, Advertise.extended, Advertise.json],
    exclusiveOptions: ControllerOptions.exclusive,
    run: runAdvertise
)

private func runAdvertise(_ arguments: ParsedArguments) throws {
    let identity = BeaconIdentity(
        uuid: arguments.required(Advertise.uuid), major: arguments.required(Advertise.major),
        minor: arguments.required(Advertise.minor))
    let frame = BeaconFrame(kind: .iBeacon, identity: identity, measuredPower: arguments.value(Advertise.measuredPower) ?? -59)
    let advertisement = try arguments.checked {
        do throws(RadioError) {
            return try BeaconAdvertisement(frame: frame, intervalMilliseconds: arguments.value(Advertise.interval) ?? 100)
        } catch {
            throw InvalidValue("--interval-ms: \(error.description)")
        }
    }
    let transport = ControllerOptions.transport(arguments)
    let duration = arguments.value(Advertise.duration)
    let dryRun = arguments.flag(Advertise.dryRun)
    let file = arguments.value(Advertise.write)
    let output = CommandScope.output(json: arguments.flag(Advertise.json))
    guard dryRun || file != nil else {
        if arguments.flag(Advertise.extended) {
            throw arguments.usageError(
                "--extended applies to --dry-run and --write; live advertising chooses from the controller's LE features")
        }
        return try advertiseLive(advertisement, transport: transport, duration: duration, output)
    }
    let commands = try arguments.checked {
        try LEAdvertisingCommands(extended: arguments.flag(Advertise.extended), advertisement: advertisement)
    }
    for command in dryRun ? commands.start + [commands.disable] : [] {
        let name = command.name ?? "HCI command"
        output.emit(
            text: command.dryRunText,
            json: ClientJSONLines.hciCommand(name: name, opcode: command.opcodeText, packet: command.packet.hexText()))
    }
    guard let file else { return }
    do {
        try commands.writeCapture(of: advertisement, duration: duration, to: file, at: SystemBeaconClock().now())
    } catch {
        throw CommandFailure("cannot write \(file): \(error)", exitCode: ExitCode.ioError)
    }
    let count = commands.start.count + 1
    output.emit(
        text: ClientText.advertisingWritten(file, commands: count),
        json: ClientJSONLines.advertisingWritten(file, commands: count))
}

/// Through bluetoothd when it manages the adapter, else over raw HCI (`openAdvertiser` says why).
private func advertiseLive(
    _ advertisement: BeaconAdvertisement, transport: HCITransport, duration: Double?, _ output: CommandOutput
) throws {
    let advertiser = try openAdvertiser(transport: transport, advertisement: advertisement)
    CommandScope.interruption.cancels(advertiser.cancel)
    let (frame, interval, adapter, mode) = (
        advertisement.frame, advertiser.intervalMilliseconds, advertiser.adapter, advertiser.commandSet
    )
    output.emit(
        text: ClientText.advertising(frame, intervalMilliseconds: interval, adapter: adapter, mode: mode, duration: duration),
        json: ClientJSONLines.advertising(
            frame, intervalMilliseconds: interval, adapter: adapter, mode: mode, via: advertiser.via))
    output.flush()  // seen through a pipe while it advertises, not at the end
    try advertiser.run(duration: duration)
    output.emit(text: "stopped advertising on \(adapter)", json: ClientJSONLines.advertisingStopped(adapter: adapter))
}
