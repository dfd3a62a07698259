import Beacons
import Foundation

/// Decoding, the replay pipeline and its memory, and the ratio to Python's beacontools.
@MainActor func benchBeacons(_ million: (url: URL, statistics: CaptureStatistics)) throws {
    // The beacon engine alone: a client home with no account and no catalog.
    let home = dataDirectory.appendingPathComponent("offline-home")
    let offline = ["LOYALTY_HOME": home.path, "LOYALTY_SERVER": "http://127.0.0.1:9"]

    // Decode-only: BTSnoop records, HCI events, AD structures; best of three runs in this process.
    let decodeSeconds = try (0..<3).map { _ in
        try seconds { _ = try AdvertisingCapture.countBeaconFrames(path: million.url.path) }
    }.min()!
    let decodeRate = Double(million.statistics.advertisingReports) / decodeSeconds
    record("decode-only (1M reports)", rate(million.statistics.advertisingReports, decodeSeconds), target: ">= 5 M/s", met: decodeRate >= 5e6)

    // The whole replay pipeline through the real binary: parse, range, monitor, JSON lines.
    let replay = try runMeasured("loyalty", ["scan", "--replay", million.url.path, "--json"], environment: offline)
    let replayRate = Double(million.statistics.advertisingReports) / replay.seconds
    record("loyalty scan --replay (1M)", rate(million.statistics.advertisingReports, replay.seconds), target: ">= 2 M/s", met: replayRate >= 2e6 && replay.status == 0)
    record("peak RSS, replay of 1M", String(format: "%.1f MB", replay.peakMB), target: "< 30 MB", met: replay.peakMB < 30)

    let tenMillion = try capture(reports: 10_000_000)
    let replay10 = try runMeasured("loyalty", ["scan", "--replay", tenMillion.url.path, "--json"], environment: offline)
    record("peak RSS, replay of 10M", String(format: "%.1f MB", replay10.peakMB), target: "< 30 MB (streaming)", met: replay10.peakMB < 30 && replay10.status == 0)
    record("loyalty scan --replay (10M)", rate(tenMillion.statistics.advertisingReports, replay10.seconds), target: ">= 2 M/s", met: Double(tenMillion.statistics.advertisingReports) / replay10.seconds >= 2e6)

    // The reference: Python beacontools parsing the same advertising payloads. Both sides parse the AD
    // structures of the same reports; ours also pays for BTSnoop and HCI framing in the decode-only figure.
    let payloadFile = dataDirectory.appendingPathComponent("payloads.bin")
    var payloads: [[UInt8]] = []
    let reader = try AdvertisingCapture(path: million.url.path)
    while payloads.count < 200_000, let (report, _) = try reader.nextReport() {
        payloads.append(Array(report.data))
    }
    try Data(payloads.flatMap { [UInt8($0.count)] + $0 }).write(to: payloadFile)
    let python = Process()
    python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    python.arguments = ["python3", "bench/beacontools_rate.py", payloadFile.path, "100000"]
    let pipe = Pipe()
    python.standardOutput = pipe
    try python.run()
    python.waitUntilExit()
    let pythonLine = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    if let referenceRate = pythonLine.split(separator: " ").dropFirst(3).first.flatMap({ Double($0) }) {
        print("reference: beacontools parses \(Int(referenceRate)) payloads/s")
        var frames = 0
        let adSeconds = seconds {
            for payload in payloads {
                payload.withUnsafeBytes { bytes in try? AdvertisingData.forEachBeaconFrame(in: bytes) { _ in frames += 1 } }
            }
        }
        let adRate = Double(payloads.count) / adSeconds
        record("AD parsing vs beacontools", String(format: "%.0fx (%.1f M/s)", adRate / referenceRate, adRate / 1e6), target: ">= 100x", met: adRate / referenceRate >= 100)
        record("decode-only vs beacontools", String(format: "%.0fx", decodeRate / referenceRate), target: ">= 100x", met: decodeRate / referenceRate >= 100)
    } else {
        record("beacontools reference", "not run: \(pythonLine)", target: "pip install beacontools", met: false)
    }
}
