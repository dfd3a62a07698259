import Arguments
import BeaconRadio
import Beacons
import Digest
import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

private enum Advertise {
    static let uuid = Option<UUID>.uuid("uuid", help: "The proximity UUID (the retailer's) of an iBeacon.")
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
        Option(name, value: value, help: help, expected: "a whole number 0...65535") { UInt16($0) }
    }

    static let eddystoneUID = Option<EddystoneUID>(
        "eddystone-uid", value: "NAMESPACE:INSTANCE", help: "Advertise an Eddystone-UID beacon (20 and 12 hex digits).",
        expected: "NAMESPACE:INSTANCE, 20 and 12 hex digits", parse: EddystoneUID.init(parsing:))
    static let eddystoneURL = Option<EddystoneURL>(
        "eddystone-url", value: "URL", help: "Advertise an Eddystone-URL beacon.",
        expected: "an http:// or https:// URL of printable ASCII encoding to at most 17 bytes"
    ) { EddystoneURL(encoding: $0) }
    static let eddystoneEID = Option<String>(
        "eddystone-eid", value: "KEYFILE",
        help: "Advertise an Eddystone-EID beacon with the identity key in KEYFILE (mode 0600; counter in KEYFILE.counter).")
    static let secure = Option<String>(
        "secure", value: "FILE",
        help: "Broadcast the secure beacon of a provisioning document (`loyalty retailer beacon secure --output FILE`).")
    static let exponent = Option<UInt8>(
        "eid-exponent", value: "K", help: "A new EID every 2^K seconds, K 0...15 (default 10).",
        expected: "a whole number 0...15") { UInt8($0).flatMap { $0 <= EddystoneEID.maximumExponent ? $0 : nil } }
    static let telemetryEvery = Option<Int>(
        "tlm-every", value: "N", help: "Eddystone: TLM in place of every Nth advertising interval (default: no TLM).",
        expected: "a whole number, 2 to 1000") { Int($0).flatMap { (2...1000).contains($0) ? $0 : nil } }
    static let battery = Option<UInt16>(
        "battery-mv", value: "MV", help: "TLM battery voltage (default 0: not measured, as mains power).",
        expected: "a whole number of mV, 0 to 65535") { UInt16($0) }
    static let temperature = Option<Double>(
        "temperature", value: "CELSIUS", help: "TLM temperature (default: no sensor).",
        expected: "a number of degrees Celsius, -127 to 127"
    ) { Double($0).flatMap { (-127...127).contains($0) ? $0 : nil } }

    static let iBeacon: [any DeclaredOption] = [uuid, major, minor]
    static let eddystone: [any DeclaredOption] = [eddystoneUID, eddystoneURL, eddystoneEID]
    static let beacons: [any DeclaredOption] = [uuid] + eddystone + [secure]
}

let advertiseCommand = Command(
    name: "advertise",
    summary: "Make this machine a beacon: an iBeacon (UUID, major, minor) or an Eddystone UID, URL or EID.",
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

        Eddystone (service data of 0xFEAA; docs/BEACONS.md): --eddystone-uid, --eddystone-url or
        --eddystone-eid KEYFILE in place of --uuid, --major and --minor; the frames carry --measured-power plus
        41 dB (their power at 0 m). An EID beacon's identity key is 32 hex digits (or 16 bytes) in a file of
        mode 0600, and its time counter is kept in KEYFILE.counter: written on the first run, it counts the
        seconds since, across restarts, as the resolver does. The EID changes when the 2^K-second window turns
        (--eid-exponent K). --tlm-every N puts a TLM frame (--battery-mv, --temperature, the advertising count
        and uptime since the start) in place of every Nth advertising interval. The advertising data is replaced
        as the frames change; --dry-run and --write list those changes through --duration. Eddystone goes over
        raw HCI only: beside a bluetoothd that manages the adapter it is refused (exit 69).

        Secure beacons (docs/SECURE-BEACONS.md): --secure FILE broadcasts the beacon of the provisioning document
        `loyalty retailer beacon secure --output FILE` wrote (mode 0600): its EID of now, from the document's
        counter and counter_at and the time since, in the document's form, an Eddystone-EID frame or an iBeacon
        under the retailer's UUID whose major and minor are the EID's first 4 bytes, replaced when the
        2^K-second window turns. As Eddystone, over raw HCI only.

        EXAMPLES:
          loyalty beacon advertise --uuid 8F0C1DDC-11E5-4A07-8910-425941B072F9 --major 1 --minor 2
          loyalty beacon advertise --uuid 8F0C1DDC-11E5-4A07-8910-425941B072F9 --major 1 --minor 2 --dry-run
          loyalty beacon advertise --eddystone-eid beacon.key --eid-exponent 10 --tlm-every 10 --battery-mv 3000
          loyalty beacon advertise --secure beacon-1-1.json

        EXIT CODES: 0 done, 64 wrong arguments, 65 a key file that holds no key or a provisioning document that
        is not one, 69 no radio, 74 FILE not written or KEYFILE not read, 77 missing capabilities, a system bus that
        refuses this user or a KEYFILE or provisioning document others may read.
        """,
    options: Advertise.iBeacon + Advertise.eddystone + [Advertise.secure] + [
        Advertise.exponent, Advertise.telemetryEvery, Advertise.battery, Advertise.temperature,
        Advertise.measuredPower, Advertise.interval,
    ] + ControllerOptions.all + [Advertise.duration, Advertise.dryRun, Advertise.write, Advertise.extended, Advertise.json],
    exclusiveOptions: ControllerOptions.exclusive + [Advertise.beacons],
    run: runAdvertise
)

private func runAdvertise(_ arguments: ParsedArguments) throws {
    let power = arguments.value(Advertise.measuredPower) ?? -59
    let keyFile = arguments.value(Advertise.eddystoneEID).map(EddystoneKeyFile.init(path:))
    let content = try advertisedContent(arguments, measuredPower: power, keyFile: keyFile)
    let advertisement = try arguments.checked {
        do throws(RadioError) {
            return try BeaconAdvertisement(content.beacon, intervalMilliseconds: arguments.value(Advertise.interval) ?? 100)
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
        if let keyFile { try keyFile.saveFirstCounter(at: SystemBeaconClock().now()) }
        return try advertiseLive(advertisement, content, transport: transport, duration: duration, output)
    }
    let (commands, changes) = try arguments.checked {
        let commands = try LEAdvertisingCommands(extended: arguments.flag(Advertise.extended), advertisement: advertisement)
        return (commands, try commands.dataChanges(of: advertisement, within: duration ?? 0))
    }
    for command in dryRun ? commands.start + changes.map(\.command) + [commands.disable] : [] {
        let name = command.name ?? "HCI command"
        output.emit(
            text: command.dryRunText,
            json: ClientJSONLines.hciCommand(name: name, opcode: command.opcodeText, packet: command.packet.hexText()))
    }
    guard let file else { return }
    do {
        try commands.writeCapture(
            of: advertisement, changes: changes, duration: duration, to: file, at: SystemBeaconClock().now())
    } catch {
        throw CommandFailure("cannot write \(file): \(error)", exitCode: ExitCode.ioError)
    }
    let count = commands.start.count + changes.count + 1
    output.emit(
        text: ClientText.advertisingWritten(file, commands: count),
        json: ClientJSONLines.advertisingWritten(file, commands: count))
}

/// Through bluetoothd when it manages the adapter, else over raw HCI (`openAdvertiser` says why).
private func advertiseLive(
    _ advertisement: BeaconAdvertisement, _ content: AdvertisedContent, transport: HCITransport, duration: Double?,
    _ output: CommandOutput
) throws {
    let advertiser = try openAdvertiser(transport: transport, advertisement: advertisement)
    CommandScope.interruption.cancels(advertiser.cancel)
    let (power, interval, adapter, mode) = (
        advertisement.measuredPower, advertiser.intervalMilliseconds, advertiser.adapter, advertiser.commandSet
    )
    output.emit(
        text: ClientText.advertising(
            content.text, measuredPower: power, intervalMilliseconds: interval, adapter: adapter, mode: mode,
            duration: duration),
        json: ClientJSONLines.advertising(
            content.fields, measuredPower: power, intervalMilliseconds: interval, adapter: adapter, mode: mode,
            via: advertiser.via))
    output.flush()  // seen through a pipe while it advertises, not at the end
    try advertiser.run(duration: duration)
    output.emit(text: "stopped advertising on \(adapter)", json: ClientJSONLines.advertisingStopped(adapter: adapter))
}

/// The beacon the options name, and how the first line names it.
private struct AdvertisedContent {
    var beacon: BeaconAdvertisement.Content
    var text: String
    var fields: [(String, JSONValue)]

    var eddystone: EddystoneBroadcast.Beacon? {
        if case .eddystone(let broadcast) = beacon { broadcast.beacon } else { nil }
    }
}

/// A secure beacon of its provisioning document, in its form, from its time counter of now: an Eddystone-EID
/// beacon (without TLM, which the caller adds) or a rotating iBeacon.
private func secureContent(_ file: SecureBeaconFile, measuredPower: Int8) throws -> AdvertisedContent {
    let provisioning = file.provisioning
    let counter = try file.counter(at: SystemBeaconClock().now())
    let timeCounter = EIDTimeCounter(exponent: provisioning.exponent, start: counter)
    let ephemeralID: @Sendable (UInt32) -> EphemeralID = { file.ephemeralID(counter: $0) }
    let rotation = "a new identity every 2^\(provisioning.exponent) s, time counter \(Int(counter))"
    let name = "secure beacon \(provisioning.major):\(provisioning.minor)"
    var fields: [(String, JSONValue)] = [
        ("secure", .string("\(provisioning.major):\(provisioning.minor)")),
        ("eid_exponent", .int(Int(provisioning.exponent))), ("counter", .int(Int(counter))),
    ]
    switch provisioning.form {
    case .eddystone:
        fields.insert(("kind", .string("eddystone-eid")), at: 0)
        return AdvertisedContent(
            beacon: .eddystone(
                EddystoneBroadcast(
                    beacon: .eid(exponent: provisioning.exponent, startCounter: counter, ephemeralID: ephemeralID),
                    measuredPower: measuredPower)),
            text: "\(name) as Eddystone-EID (\(rotation))", fields: fields)
    case .ibeacon:
        fields.insert(contentsOf: [("kind", .string("ibeacon")), ("uuid", .string(provisioning.uuid.uuidString))], at: 0)
        let beacon = RotatingIBeacon(
            uuid: provisioning.uuid, measuredPower: measuredPower, timeCounter: timeCounter, ephemeralID: ephemeralID)
        return AdvertisedContent(
            beacon: .rotatingIBeacon(beacon),
            text: "\(name) as an iBeacon of \(provisioning.uuid.uuidString), its major and minor from its EID (\(rotation))",
            fields: fields)
    }
}

/// An iBeacon from --uuid, --major and --minor, or the Eddystone beacon of --eddystone-uid, -url or -eid; usage
/// errors (exit 64) for a mix or a half.
private func advertisedContent(
    _ arguments: ParsedArguments, measuredPower: Int8, keyFile: EddystoneKeyFile?
) throws -> AdvertisedContent {
    let eddystoneOnly: [any DeclaredOption] = [
        Advertise.exponent, Advertise.telemetryEvery, Advertise.battery, Advertise.temperature,
    ]
    if let uuid = arguments.value(Advertise.uuid) {
        guard let major = arguments.value(Advertise.major), let minor = arguments.value(Advertise.minor) else {
            throw arguments.usageError("--uuid needs --major and --minor")
        }
        if let given = eddystoneOnly.first(where: { arguments.isGiven($0) }) {
            throw arguments.usageError("--\(given.declaration.name) applies to Eddystone beacons, not to --uuid")
        }
        let frame = BeaconFrame(
            kind: .iBeacon, identity: BeaconIdentity(uuid: uuid, major: major, minor: minor), measuredPower: measuredPower)
        return AdvertisedContent(
            beacon: .iBeacon(frame), text: "\(frame.identity)",
            fields: [("uuid", .string(uuid.uuidString)), ("major", .int(Int(major))), ("minor", .int(Int(minor)))])
    }
    if arguments.isGiven(Advertise.major) || arguments.isGiven(Advertise.minor) {
        throw arguments.usageError("--major and --minor go with --uuid")
    }
    if keyFile == nil, arguments.isGiven(Advertise.exponent) {
        throw arguments.usageError(
            arguments.isGiven(Advertise.secure)
                ? "--eid-exponent goes with --eddystone-eid: with --secure, K is the provisioning document's"
                : "--eid-exponent goes with --eddystone-eid")
    }
    let telemetry = arguments.value(Advertise.telemetryEvery).map {
        TelemetrySchedule(
            every: $0, batteryMillivolts: arguments.value(Advertise.battery) ?? 0, drainMillivoltsPerHour: 0,
            temperatureBits: arguments.value(Advertise.temperature).map { UInt16(bitPattern: Int16(($0 * 256).rounded())) }
                ?? TelemetryFrame.temperatureNotSupported)
    }
    if telemetry == nil, arguments.isGiven(Advertise.battery) || arguments.isGiven(Advertise.temperature) {
        throw arguments.usageError("--battery-mv and --temperature go into TLM frames: give --tlm-every")
    }
    let beacon: EddystoneBroadcast.Beacon
    var text: String
    var fields: [(String, JSONValue)]
    if let uid = arguments.value(Advertise.eddystoneUID) {
        beacon = .uid(uid)
        text = "Eddystone-UID \(uid)"
        fields = [
            ("kind", .string("eddystone-uid")), ("namespace", .string("\(uid.namespace)")),
            ("instance", .string(uid.instance.hexText())),
        ]
    } else if let url = arguments.value(Advertise.eddystoneURL) {
        beacon = .url(url)
        text = "Eddystone-URL \(url)"
        fields = [("kind", .string("eddystone-url")), ("url", .string("\(url)"))]
    } else if let keyFile {
        let key = try keyFile.identityKey()
        let exponent = arguments.value(Advertise.exponent) ?? 10
        let counter = try keyFile.counter(now: SystemBeaconClock().now())
        // Checked here, so that the advertiser's later computations with the same key and K cannot fail.
        _ = try EddystoneEID.ephemeralID(identityKey: key, exponent: exponent, counter: UInt32(truncatingIfNeeded: Int64(counter)))
        beacon = .eid(exponent: exponent, startCounter: counter) { counter in
            EphemeralID(bytes: try! EddystoneEID.ephemeralID(identityKey: key, exponent: exponent, counter: counter))!
        }
        text = "Eddystone-EID (a new EID every 2^\(exponent) s, time counter \(Int(counter)))"
        fields = [
            ("kind", .string("eddystone-eid")), ("eid_exponent", .int(Int(exponent))), ("counter", .int(Int(counter))),
        ]
    } else if let path = arguments.value(Advertise.secure) {
        let secure = try secureContent(SecureBeaconFile(path: path), measuredPower: measuredPower)
        guard let eid = secure.eddystone else {
            if telemetry != nil {
                throw arguments.usageError("--tlm-every applies to Eddystone beacons, and \(path)'s broadcasts as an iBeacon")
            }
            return secure
        }
        (beacon, text, fields) = (eid, secure.text, secure.fields)
    } else {
        throw arguments.usageError(
            "name the beacon: --uuid (with --major and --minor), --eddystone-uid, --eddystone-url, --eddystone-eid or --secure")
    }
    if let every = telemetry?.every {
        text += " with TLM every \(every) intervals"
        fields.append(("tlm_every", .int(every)))
    }
    return AdvertisedContent(
        beacon: .eddystone(EddystoneBroadcast(beacon: beacon, measuredPower: measuredPower, telemetry: telemetry)),
        text: text, fields: fields)
}
