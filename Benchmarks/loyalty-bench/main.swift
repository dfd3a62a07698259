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

/// Runs a product of this package with stdout to /dev/null; returns wall seconds, CPU seconds (user and
/// system: what the process itself used, whatever else the machine was running) and peak RSS in MB.
///
/// The peak comes from GNU time, which forks before it execs the product: a process spawned straight
/// from this one would report this bench's own peak, because exec keeps the old address space's
/// high-water mark and posix_spawn shares our address space until the exec.
func runMeasured(_ product: String, _ args: [String], environment: [String: String] = [:]) throws -> (
    seconds: Double, cpuSeconds: Double, peakMB: Double, status: Int32
) {
    let peakFile = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-bench-peak-\(getpid())")
    defer { try? FileManager.default.removeItem(at: peakFile) }
    var pid: pid_t = 0
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    let time = "/usr/bin/time"
    let path = buildDirectory.appendingPathComponent(product).path
    let argv = ([time, "-f", "%U %S %M", "-o", peakFile.path, path] + args).map { strdup($0) } + [nil]
    let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { strdup("\($0)=\($1)") } + [nil]
    defer { (argv + variables).forEach { free($0) } }
    let start = DispatchTime.now().uptimeNanoseconds
    guard posix_spawn(&pid, time, &actions, nil, argv, variables) == 0 else {
        throw BenchFailure("cannot run \(time) (Debian package `time`) for \(path)")
    }
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    // GNU time writes "Command exited with non-zero status N" before the figure when the program fails.
    let report = (try? String(contentsOf: peakFile, encoding: .utf8)) ?? ""
    let figures = (report.split(separator: "\n").last ?? "").split(separator: " ").compactMap { Double($0) }
    guard figures.count == 3 else { return (elapsed, .nan, .nan, (status >> 8) & 0xFF) }
    return (elapsed, figures[0] + figures[1], figures[2] / 1024, (status >> 8) & 0xFF)
}

// `loyalty-bench [DATA_DIR [SECTION...]]`: sections proximity, beacons, replay, server, pgbouncer, client, geo, json, retailer, radio (default: all).
let sections = Set(arguments.dropFirst())
func wants(_ section: String) -> Bool { sections.isEmpty || sections.contains(section) }

if wants("proximity") { benchProximity() }
// The 1M capture is generated once and kept; only the sections that replay it need it.
let million = wants("beacons") || wants("client") ? try capture(reports: 1_000_000) : nil
if let million {
    print("1M capture: \(million.statistics.advertisingReports) reports, \(million.statistics.beaconFrames) beacon frames")
}
if let million, wants("beacons") { try benchBeacons(million) }
if wants("replay") { try benchStoreReplay() }
if wants("server") { try benchServer() }
if wants("pgbouncer") { try benchPgBouncer() }
if let million, wants("client") { try benchClient(replaying: million.url, reports: million.statistics.advertisingReports) }

if wants("geo") { try geoBench() }
if wants("json") { try benchJSON() }
if wants("retailer") { try benchRetailer() }
if wants("radio") { try benchRadio() }

print("\n\(figures.filter(\.met).count) of \(figures.count) figures meet their targets")
// A missed target fails the run (exit 1), naming each miss, so a script or CI can act on it.
let missed = figures.filter { !$0.met }
for figure in missed {
    print("missed: \(figure.name): \(figure.value) (target \(figure.target))")
}
exit(missed.isEmpty ? 0 : 1)
