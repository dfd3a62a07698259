import Arguments
import BeaconRadio
import Beacons
import Foundation
import LoyaltyAPI
import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

private enum Calibrate {
    static let replay = Option<String>(
        "replay", value: "FILE", help: "Read the samples from a BTSnoop capture instead of scanning.")
    static let seconds = Option<Double>("seconds", value: "S", help: "How long to listen (default 30).", parse: positiveSeconds)
    static let minimumSamples = Option<Int>(
        "min-samples", value: "N", help: "Refuse with fewer samples than this after outlier rejection (default 20)."
    ) { Int($0).flatMap { $0 >= 1 ? $0 : nil } }
    static let adapter = Option<String>(
        "adapter", value: "NAME", help: "The adapter to scan with (default: the first one).")
    static let json = Flag("json", help: "Print one JSON object.")
    static let beacon = Positional("UUID:MAJOR:MINOR")
}

let calibrateCommand = Command(
    name: "calibrate",
    summary: "Measure the power a beacon should advertise: its RSSI at 1 m, outliers rejected.",
    synopsis: "[--replay FILE] [--seconds 30] [--min-samples 20]",
    discussion: """
        Hold this machine (or the phone whose capture you replay) 1 m from the beacon, in the open, and
        keep still while it listens. Every advertisement of that beacon is an RSSI sample; samples more
        than 3 robust standard deviations (1.4826 x the median absolute deviation, at least 1 dB) from
        the median are rejected as outliers (a body in between, a reflection), and the mean of the rest,
        rounded, is the measured power to program (`loyalty beacon advertise --measured-power`). The
        spread is the standard deviation of the samples kept: a large one means the reading moved.

        Live, it listens for --seconds (Ctrl-C ends early). With --replay it reads the capture's samples
        of the first --seconds after the beacon is first heard.

        EXIT CODES: 0 done; 65 too few samples (fewer than --min-samples left after rejecting outliers:
        listen longer or closer), or a damaged capture; 64 wrong arguments; 69 no radio; 77 missing
        capabilities.
        """,
    options: [Calibrate.replay, Calibrate.seconds, Calibrate.minimumSamples, Calibrate.adapter, hciOption, Calibrate.json],
    positionals: [Calibrate.beacon],
    run: runCalibrate
)

private func runCalibrate(_ arguments: ParsedArguments) throws {
    let text = arguments.word(Calibrate.beacon) ?? ""
    guard let constraint = try? BeaconIdentityConstraint(parsing: text), let major = constraint.major,
        let minor = constraint.minor
    else {
        throw arguments.usageError(
            "'\(text)' is not a beacon: use UUID:MAJOR:MINOR (major and minor 0...65535)")
    }
    let identity = BeaconIdentity(uuid: constraint.uuid, major: major, minor: minor)
    let seconds = try arguments.value(Calibrate.seconds) ?? 30
    let minimum = try arguments.value(Calibrate.minimumSamples) ?? 20

    let heard: CalibrationSamples
    if let file = try arguments.value(Calibrate.replay) {
        heard = try samples(of: identity, replaying: file, seconds: seconds)
    } else {
        heard = try samples(of: identity, transport: try hciTransport(arguments, adapter: Calibrate.adapter), seconds: seconds)
    }
    let calibration: MeasuredPowerCalibration
    do {
        calibration = try MeasuredPowerCalibration(
            rssi: heard.rssi, configuration: .init(minimumSamples: minimum))
    } catch {
        throw CommandFailure("\(identity): \(error)", exitCode: ExitCode.dataError)
    }
    report(
        calibration, of: identity, advertised: heard.advertisedPower, seconds: heard.span, json: arguments.flag(Calibrate.json))
}

private func samples(of identity: BeaconIdentity, replaying file: String, seconds: Double) throws -> CalibrationSamples {
    do {
        return try CalibrationSamples.reading(try AdvertisingCapture(path: file), of: identity, seconds: seconds)
    } catch {
        throw CommandFailure("cannot read \(file): \(error)", exitCode: ExitCode.dataError)
    }
}

private func samples(of identity: BeaconIdentity, transport: HCITransport, seconds: Double) throws -> CalibrationSamples {
    // The same path as a scan: beside a discovering bluetoothd, through it.
    let scanner = try openScanner(transport: transport, options: LEScanOptions())
    Interruption.cancels(scanner.cancel)
    if standardOutputIsTerminal {
        printError("listening for \(String(format1: seconds)) s: hold the receiver 1 m from \(identity)")
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { scanner.cancel() }
    var heard = CalibrationSamples(of: identity)
    try scanner.run(tickInterval: nil, onTick: { _ in }) { packet in
        for sighting in HCIEvent.beaconSightings(inEvent: packet.bytes, at: packet.time) { heard.add(sighting) }
    }
    return heard
}

private func report(
    _ calibration: MeasuredPowerCalibration, of identity: BeaconIdentity, advertised: Int8?, seconds: Double,
    json: Bool
) {
    if json {
        return printOut(BeaconJSONLines.calibration(calibration, of: identity, advertised: advertised, seconds: seconds))
    }
    printOut(ClientText.calibration(calibration, of: identity, advertised: advertised, seconds: seconds))
}
