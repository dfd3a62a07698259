import Arguments
import Beacons
import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

let beaconCommand = Command(
    name: "beacon",
    summary: "Work with beacons themselves: advertise one, calibrate its measured power, simulate a walk.",
    subcommands: [advertiseCommand, calibrateCommand, simulateCommand]
)

private enum Simulate {
    static let walk = Option<String>(
        "walk", value: "SPEC", help: "A beacon and its distance over time (repeatable, at least one).", repeatable: true,
        required: true)
    static let write = Option<String>(
        "write", value: "FILE", help: "The BTSnoop file to write (datalink 1002, as Android writes).", required: true)
    static let measuredPower = Option<Int8>(
        "measured-power", value: "DBM", help: "RSSI at 1 m the beacons advertise, -100...0 (default -59).",
        expected: "a whole number of dBm, -100 to 0"
    ) { Int8($0).flatMap { (-100...0).contains($0) ? $0 : nil } }
    static let interval = Option<Double>(
        "interval-ms", value: "MS", help: "Advertising interval of each beacon (default 100).",
        expected: "a number of milliseconds, 20 to 10000"
    ) { Double($0).flatMap { $0 >= 20 && $0 <= 10_000 ? $0 : nil } }
    static let noise = Option<Double>(
        "noise-db", value: "DB", help: "Standard deviation of the RSSI noise (default 4).",
        expected: "a number of dB, 0 to 30"
    ) { Double($0).flatMap { $0 >= 0 && $0 <= 30 ? $0 : nil } }
    static let seed = Option<UInt64>(
        "seed", value: "N", help: "Seed of the noise (default 1).", expected: "a whole number, 0 or more") { UInt64($0) }
    static let extended = Flag("extended", help: "Write LE Extended Advertising Reports instead of legacy ones.")
    static let json = Flag("json", help: "Print what was written as JSON.")
    static let telemetryEvery = Option<Int>(
        "tlm-every", value: "N", help: "Eddystone beacons send TLM in place of every Nth advert (default: no TLM).",
        expected: "a whole number, 1 to 1000"
    ) { Int($0).flatMap { (1...1000).contains($0) ? $0 : nil } }
    static let battery = Option<UInt16>(
        "battery-mv", value: "MV", help: "TLM battery at the start, draining 600 mV an hour (default 3000).",
        expected: "a whole number of mV, 0 to 65535") { UInt16($0) }
    static let eidCounter = Option<UInt32>(
        "eid-counter", value: "N",
        help: "EID beacons' time counter at the start (default 65280, near a key roll-over).",
        expected: "a whole number, 0 to 4294967295") { UInt32($0) }
    static let secure = Option<String>(
        "secure", value: "FILE",
        help: "The secure beacon of a provisioning document, walked as --walk secure@SECONDS=METRES,...")
    static let at = Option<Date>(
        "at", value: "TIME",
        help: "When the walk starts, ISO 8601 (default: now with --secure, else 2023-11-14T22:13:20Z).",
        expected: "an ISO 8601 date-time such as 2026-01-31T09:00:00Z", parse: LoyaltyJSON.parseTimestamp)
    /// The walk spec's name for the beacon of --secure.
    static let securePrefix = "secure@"
}

private let simulateCommand = Command(
    name: "simulate",
    summary: "Write a BTSnoop capture of beacons heard along a scripted walk.",
    discussion: """
        Each --walk names a beacon and its distance from the listener over time: `@0=12,10=1,20=12` means
        12 m away at 0 s, 1 m at 10 s, 12 m again at 20 s (linear in between). RSSI follows the
        log-distance path-loss model from the measured power, with Gaussian noise. The same seed gives
        the same file. Replay it with `loyalty scan --replay FILE`. An Eddystone-UID beacon is
        NAMESPACE:INSTANCE@... (20 and 12 hex digits), an Eddystone-EID beacon eid:IDENTITYKEY:K@... (32 hex
        digits, a new EID every 2^K s from --eid-counter); --tlm-every interleaves their TLM frames.

        --secure FILE reads a secure beacon's provisioning document (`loyalty retailer beacon secure --output
        FILE`, mode 0600), and --walk secure@... walks that beacon: in the document's form (Eddystone-EID, or an
        iBeacon under its UUID with the EID's first 4 bytes as major and minor), with the identities it
        broadcasts over the walk from --at (default now; from the last whole second of its counter), as the
        service resolves them. --at also dates the capture: a walk --at an hour ago is what a shopper recorded then.

        EXAMPLE:
          loyalty beacon simulate --walk 8F0C1DDC-11E5-4A07-8910-425941B072F9:1:1@0=12,10=1,20=12 --write walk.btsnoop
          loyalty beacon simulate --secure beacon-1-1.json --walk secure@0=3,5=0.5,20=0.5 --write store.btsnoop
        """,
    options: [
        Simulate.walk, Simulate.write, Simulate.measuredPower, Simulate.interval, Simulate.noise, Simulate.seed,
        Simulate.extended, Simulate.json, Simulate.telemetryEvery, Simulate.battery, Simulate.eidCounter,
        Simulate.secure, Simulate.at,
    ],
    run: runSimulate
)

private func runSimulate(_ arguments: ParsedArguments) throws {
    let file = arguments.required(Simulate.write)
    var specs = arguments.values(Simulate.walk)
    let securePaths = specs.indices.filter { specs[$0].hasPrefix(Simulate.securePrefix) }
    switch (arguments.isGiven(Simulate.secure), securePaths.isEmpty) {
    case (false, false): throw arguments.usageError("--walk secure@... walks the beacon of --secure FILE: give it")
    case (true, true): throw arguments.usageError("--secure FILE: walk its beacon with --walk secure@SECONDS=METRES,...")
    default: break
    }
    let secure = try arguments.value(Simulate.secure).map(SecureBeaconFile.init(path:))
    var start = arguments.value(Simulate.at)?.timeIntervalSince1970
        ?? (secure == nil ? BeaconWalk.defaultStart.unixSeconds : SystemBeaconClock().now())
    let secureCounter = try secure.map { file in
        // The walk starts on the counter's last whole second, so that its windows turn when the beacon's do.
        let counter = try file.counter(at: start)
        start -= counter - counter.rounded(.down)
        return UInt32(counter)
    }
    if let secure {
        // An Eddystone-EID walk of the document's key and K; its iBeacon form is made from it below.
        let eid = "eid:\(secure.provisioning.identityKey):\(secure.provisioning.exponent)@"
        for index in securePaths { specs[index] = eid + specs[index].dropFirst(Simulate.securePrefix.count) }
    }
    let power = arguments.value(Simulate.measuredPower) ?? -59
    let interval = arguments.value(Simulate.interval) ?? 100
    let noise = arguments.value(Simulate.noise) ?? 4
    let seed = arguments.value(Simulate.seed) ?? 1

    let counter = arguments.value(Simulate.eidCounter) ?? 65280
    var beacons = try arguments.checked {
        try BeaconWalk.beacons(parsing: specs, measuredPower: power) { key, exponent, seconds in
            let start = key == secure?.identityKey ? secureCounter ?? counter : counter
            let schedule = try? EphemeralIDSchedule(
                identityKey: key, exponent: exponent, startCounter: start, seconds: seconds)
            return schedule ?? nil
        }
    }
    if let provisioning = secure?.provisioning, provisioning.form == .ibeacon {
        for index in securePaths {
            beacons[index].frame.kind = .iBeacon
            if let first = beacons[index].ephemeralIDs?.ids.first {
                beacons[index].frame.identity = BeaconIdentity(uuid: provisioning.uuid, rotatingWith: first)
            }
        }
    }
    let telemetry = arguments.value(Simulate.telemetryEvery).map {
        TelemetrySchedule(every: $0, batteryMillivolts: arguments.value(Simulate.battery) ?? 3000)
    }
    let walk = BeaconWalk(
        beacons: beacons, start: BTSnoopTimestamp(unixSeconds: start), advertisingInterval: interval / 1000,
        rssiNoise: noise, seed: seed, telemetry: telemetry)
    let format: AdvertisingReportFormat = arguments.flag(Simulate.extended) ? .extended : .legacy
    // Before the file is made: a time of 1e300 would fill the disk.
    try arguments.checked { try walk.checkSize(format: format) }
    do {
        let writer = try BTSnoopWriter(path: file)
        try walk.write(to: writer, format: format)
        try writer.close()
    } catch {
        throw CommandFailure("cannot write \(file): \(error)", exitCode: ExitCode.ioError)
    }
    CommandScope.output(json: arguments.flag(Simulate.json)).emit(
        text: ClientText.walkWritten(file, beacons: beacons.count, seconds: walk.duration),
        json: ClientJSONLines.walkWritten(file, beacons: beacons.count, seconds: walk.duration))
}
