// `make bench`: the speed and memory figures the issues name, each with its target and, where an issue
// names a reference, the ratio to that reference measured in the same run.
import Beacons
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let buildDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
let dataDirectory = URL(fileURLWithPath: arguments.first ?? "bench-data", isDirectory: true)
try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)

/// One measured figure against its target.
struct Figure {
    let name: String
    let value: String
    let target: String
    let met: Bool
}
var figures: [Figure] = []

@MainActor func record(_ name: String, _ value: String, target: String, met: Bool) {
    figures.append(Figure(name: name, value: value, target: target, met: met))
    print("\(met ? "ok  " : "MISS") \(name): \(value) (target \(target))")
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func rate(_ count: Int, _ seconds: Double) -> String {
    String(format: "%.2f M/s", Double(count) / seconds / 1e6)
}

/// A bulk capture of `reports` advertising reports, generated once and kept between runs.
func capture(reports: Int) throws -> (url: URL, statistics: CaptureStatistics) {
    let url = dataDirectory.appendingPathComponent("bulk-\(reports).btsnoop")
    let bulk = BulkCapture(reports: reports)
    if !FileManager.default.fileExists(atPath: url.path) {
        print("generating \(url.lastPathComponent) ...")
        let partial = url.appendingPathExtension("partial")
        let writer = try BTSnoopWriter(path: partial.path)
        _ = try bulk.write(to: writer)
        try writer.close()
        try FileManager.default.moveItem(at: partial, to: url)
    }
    // What the file holds is what the bench counts.
    return (url, try AdvertisingCapture.countBeaconFrames(path: url.path))
}

/// Runs a product of this package with stdout to /dev/null; returns wall seconds and peak RSS in MB.
func runMeasured(_ product: String, _ args: [String]) throws -> (seconds: Double, peakMB: Double, status: Int32) {
    var pid: pid_t = 0
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    let path = buildDirectory.appendingPathComponent(product).path
    let argv = ([path] + args).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    let start = DispatchTime.now().uptimeNanoseconds
    guard posix_spawn(&pid, path, &actions, nil, argv, environ) == 0 else {
        throw NSError(domain: "bench", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot run \(path)"])
    }
    var status: Int32 = 0
    var usage = rusage()
    wait4(pid, &status, 0, &usage)
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    return (elapsed, Double(usage.ru_maxrss) / 1024, (status >> 8) & 0xFF)
}

// MARK: beacon engine (issue 2)

let million = try capture(reports: 1_000_000)
print("1M capture: \(million.statistics.advertisingReports) reports, \(million.statistics.beaconFrames) beacon frames")

// Decode-only: BTSnoop records, HCI events, AD structures; best of three runs in this process.
let decodeSeconds = try (0..<3).map { _ in
    try seconds { _ = try AdvertisingCapture.countBeaconFrames(path: million.url.path) }
}.min()!
let decodeRate = Double(million.statistics.advertisingReports) / decodeSeconds
record("decode-only (1M reports)", rate(million.statistics.advertisingReports, decodeSeconds), target: ">= 5 M/s", met: decodeRate >= 5e6)

// The whole replay pipeline through the real binary: parse, range, monitor, JSON lines.
let replay = try runMeasured("loyalty", ["scan", "--replay", million.url.path, "--json"])
let replayRate = Double(million.statistics.advertisingReports) / replay.seconds
record("loyalty scan --replay (1M)", rate(million.statistics.advertisingReports, replay.seconds), target: ">= 2 M/s", met: replayRate >= 2e6 && replay.status == 0)
record("peak RSS, replay of 1M", String(format: "%.1f MB", replay.peakMB), target: "< 30 MB", met: replay.peakMB < 30)

let tenMillion = try capture(reports: 10_000_000)
let replay10 = try runMeasured("loyalty", ["scan", "--replay", tenMillion.url.path, "--json"])
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

try geoBench()

print("\n\(figures.filter(\.met).count) of \(figures.count) figures meet their targets")
