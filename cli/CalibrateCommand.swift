import BeaconRadio
import Beacons
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

let calibrateCommand = CommandSpec(
    name: "calibrate",
    summary: "Measure the power a beacon should advertise: its RSSI at 1 m, outliers rejected.",
    synopsis: "[--replay FILE] [--seconds 30] [--min-samples 20] UUID:MAJOR:MINOR",
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
    options: [
        .value("replay", "FILE", "Read the samples from a BTSnoop capture instead of scanning."),
        .value("seconds", "S", "How long to listen (default 30)."),
        .value("min-samples", "N", "Refuse with fewer samples than this after outlier rejection (default 20)."),
        .value("adapter", "NAME", "The adapter to scan with (default: the first one)."),
        .flag("json", "Print one JSON object."),
    ],
    run: runCalibrate
)

private func runCalibrate(_ arguments: ParsedArguments) throws {
    let path = arguments.commandPath
    guard arguments.positionals.count == 1 else {
        throw UsageError("name one beacon as UUID:MAJOR:MINOR", commandPath: path)
    }
    let text = arguments.positionals[0]
    guard let constraint = try? BeaconIdentityConstraint(parsing: text), let major = constraint.major,
        let minor = constraint.minor
    else {
        throw UsageError(
            "'\(text)' is not a beacon: use UUID:MAJOR:MINOR (major and minor 0...65535)", commandPath: path)
    }
    let identity = BeaconIdentity(uuid: constraint.uuid, major: major, minor: minor)
    let seconds = try arguments.value("seconds", default: 30.0) {
        Double($0).flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
    }
    let minimum = try arguments.value("min-samples", default: 20) { Int($0).flatMap { $0 >= 1 ? $0 : nil } }

    let heard: HeardSamples
    if let file = arguments.value("replay") {
        heard = try samples(of: identity, replaying: file, seconds: seconds)
    } else {
        heard = try samples(of: identity, adapter: arguments.value("adapter"), seconds: seconds)
    }
    let calibration: MeasuredPowerCalibration
    do {
        calibration = try MeasuredPowerCalibration(
            rssi: heard.rssi, configuration: .init(minimumSamples: minimum))
    } catch {
        throw CommandFailure("\(identity): \(error)", exitCode: ExitCode.dataError)
    }
    report(
        calibration, of: identity, advertised: heard.advertisedPower, seconds: heard.span, json: arguments.flag("json"))
}

/// One beacon's RSSI readings, the measured power its frames carry, and the seconds they span.
private struct HeardSamples {
    var rssi: [Int8] = []
    var advertisedPower: Int8?
    var first: Double?
    var last: Double?

    var span: Double { (last ?? 0) - (first ?? 0) }

    /// Adds a sighting of the beacon; false once it falls beyond `seconds` after the first.
    mutating func add(_ sighting: BeaconSighting, seconds: Double) -> Bool {
        let start = first ?? sighting.time
        guard sighting.time - start <= seconds else { return false }
        first = start
        last = sighting.time
        rssi.append(sighting.rssi)
        advertisedPower = sighting.frame.measuredPower
        return true
    }
}

private func samples(of identity: BeaconIdentity, replaying file: String, seconds: Double) throws -> HeardSamples {
    var heard = HeardSamples()
    do {
        let capture = try AdvertisingCapture(path: file)
        while let sighting = try capture.nextSighting() {
            guard sighting.identity == identity else { continue }
            guard heard.add(sighting, seconds: seconds) else { break }
        }
    } catch {
        throw CommandFailure("cannot read \(file): \(error)", exitCode: ExitCode.dataError)
    }
    return heard
}

private func samples(of identity: BeaconIdentity, adapter: String?, seconds: Double) throws -> HeardSamples {
    // The same path as a scan: beside a discovering bluetoothd, through it.
    let scanner = try ScanSession.openScanner(adapter: adapter, options: LEScanOptions())
    ScanInterruption.install(scanner)
    if standardOutputIsTerminal {
        printError("listening for \(String(format1: seconds)) s: hold the receiver 1 m from \(identity)")
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { scanner.cancel() }
    var heard = HeardSamples()
    do {
        try scanner.run(tickInterval: nil, onTick: { _ in }) { packet in
            packet.bytes.withUnsafeBytes { bytes in
                guard var reports = try? AdvertisingReportIterator(event: bytes) else { return }
                while let report = try? reports.next() {
                    try? AdvertisingData.forEachBeaconFrame(in: report.data) { frame in
                        guard frame.identity == identity else { return }
                        let sighting = BeaconSighting(
                            frame: frame, address: report.address, rssi: report.rssi, time: packet.time)
                        _ = heard.add(sighting, seconds: .infinity)
                    }
                }
            }
        }
    } catch {
        throw radioFailure(error)
    }
    return heard
}

private func report(
    _ calibration: MeasuredPowerCalibration, of identity: BeaconIdentity, advertised: Int8?, seconds: Double,
    json: Bool
) {
    let rounded = { (value: Double) in (value * 10).rounded() / 10 }
    if json {
        printJSONLine([
            ("uuid", .string(identity.uuid.uuidString)), ("major", .int(Int(identity.major))),
            ("minor", .int(Int(identity.minor))), ("measured_power", .int(Int(calibration.measuredPower))),
            ("mean_rssi", .double(rounded(calibration.meanRSSI))),
            ("median_rssi", .double(rounded(calibration.medianRSSI))),
            ("spread_db", .double(rounded(calibration.standardDeviation))),
            ("samples_used", .int(calibration.samplesUsed)), ("samples_rejected", .int(calibration.samplesRejected)),
            ("seconds", .double(rounded(seconds))),
            ("advertised_measured_power", advertised.map { .int(Int($0)) } ?? .null),
        ])
        return
    }
    var text = """
        measured power to program: \(calibration.measuredPower) dBm
          mean RSSI \(String(format1: calibration.meanRSSI)) dBm, median \(String(format1: calibration.medianRSSI)) dBm, \
        spread ±\(String(format1: calibration.standardDeviation)) dB (standard deviation)
          \(calibration.samplesUsed) samples used, \(calibration.samplesRejected) rejected as outliers, \
        over \(String(format1: seconds)) s
        """
    if let advertised {
        text += "\n  \(identity) advertises \(advertised) dBm now"
    }
    printOut(text)
}
