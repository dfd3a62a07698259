import Arguments
import BeaconRadio
import Beacons
import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

private enum Calibrate {
    static let replay = Option<String>(
        "replay", value: "FILE", help: "Read the samples from a BTSnoop capture instead of scanning.")
    static let seconds = Option<Double>.seconds("seconds", help: "How long to listen (default 30).")
    static let minimumSamples = Option<Int>(
        "min-samples", value: "N", help: "Refuse with fewer samples than this after outlier rejection (default 20).",
        expected: "a whole number, 1 or more"
    ) { Int($0).flatMap { $0 >= 1 ? $0 : nil } }
    static let json = Flag("json", help: "Print one JSON object.")
    static let beacon = Positional("UUID:MAJOR:MINOR", parse: BeaconIdentity.init(parsing:))
}

let calibrateCommand = Command(
    name: "calibrate",
    summary: "Measure the power a beacon should advertise: its RSSI at 1 m, outliers rejected.",
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
    options: [Calibrate.replay, Calibrate.seconds, Calibrate.minimumSamples] + ControllerOptions.all + [Calibrate.json],
    positionals: [Calibrate.beacon], exclusiveOptions: ControllerOptions.exclusive,
    run: runCalibrate
)

private func runCalibrate(_ arguments: ParsedArguments) throws {
    let identity = arguments.word(Calibrate.beacon)!
    let seconds = arguments.value(Calibrate.seconds) ?? 30
    let minimum = arguments.value(Calibrate.minimumSamples) ?? 20
    let transport = ControllerOptions.transport(arguments)
    let output = CommandScope.output(json: arguments.flag(Calibrate.json))

    let heard: CalibrationSamples
    if let file = arguments.value(Calibrate.replay) {
        do {
            heard = try CalibrationSamples.reading(try AdvertisingCapture(path: file), of: identity, seconds: seconds)
        } catch {
            throw CommandFailure("cannot read \(file): \(error)", exitCode: error.exitCode)
        }
    } else {
        // The same path as a scan: beside a discovering bluetoothd, through it.
        let scanner = try openScanner(transport: transport, options: LEScanOptions())
        CommandScope.interruption.cancels(scanner.cancel)
        if output.isTerminal {
            output.error("listening for \(String(format1: seconds)) s: hold the receiver 1 m from \(identity)")
        }
        heard = try CalibrationSamples.listening(to: scanner, of: identity, seconds: seconds)
    }
    let calibration: MeasuredPowerCalibration
    do {
        calibration = try MeasuredPowerCalibration(rssi: heard.rssi, configuration: .init(minimumSamples: minimum))
    } catch {
        throw CommandFailure("\(identity): \(error)", exitCode: ExitCode.dataError)
    }
    let (advertised, span) = (heard.advertisedPower, heard.span)
    output.emit(
        text: ClientText.calibration(calibration, of: identity, advertised: advertised, seconds: span),
        json: BeaconJSONLines.calibration(calibration, of: identity, advertised: advertised, seconds: span))
}
