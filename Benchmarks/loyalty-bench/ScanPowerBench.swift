// Issue 47: what each `loyalty scan --power` profile asks of the radio and how soon it hears a beacon, through an
// H4 Unix socket. bench/scan_power.py is the controller: it keeps the scan parameters it is sent, reports a beacon
// advertising every 100 ms only inside the scan windows those parameters ask for, and counts the scan's wake-ups
// over a quiet spell (its threads' voluntary context switches).
import Foundation

@MainActor func benchScanPower(runs: Int = 7, quietSeconds: Int = 60) throws {
    print("\nradio: loyalty scan --power, over an H4 Unix socket served by bench/scan_power.py")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    let loyalty = buildDirectory.appendingPathComponent("loyalty").path
    process.arguments = ["python3", "bench/scan_power.py", loyalty, String(runs), String(quietSeconds)]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw BenchFailure("bench/scan_power.py exited \(process.terminationStatus)") }
    // Android's scan modes, for comparison: LOW_LATENCY 100 of 100 ms, BALANCED 183 of 730, LOW_POWER 140 of 1,400.
    let android = ["high": "LOW_LATENCY 100 %", "balanced": "BALANCED 25.1 % (183 of 730 ms)", "low": "LOW_POWER 10 % (140 of 1,400 ms)"]
    let targets: [String: (duty: Double, entry: Double)] = ["high": (1, 1), "balanced": (0.25, 3), "low": (0.10, 10)]
    for line in text.split(separator: "\n") {
        guard let figure = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let power = figure["power"] as? String, let target = targets[power], let duty = figure["duty"] as? Double,
            let passive = figure["passive"] as? Bool, let wakeups = figure["wakeups_per_s"] as? Double
        else { throw BenchFailure("bench/scan_power.py printed \(line)") }
        let entered = figure["entered"] as? Int ?? 0
        let median = figure["entry_median_s"] as? Double ?? .infinity
        let worst = figure["entry_worst_s"] as? Double ?? .infinity
        record(
            "radio: --power \(power), duty cycle the controller was asked for",
            String(
                format: "%.1f %% (%.1f ms of %.1f ms), %@", duty * 100, figure["window_ms"] as? Double ?? 0,
                figure["interval_ms"] as? Double ?? 0, passive ? "passive: no scan request" : "active"),
            reference: "Android " + (android[power] ?? ""), target: String(format: "<= %.0f %%, passive", target.duty * 100),
            met: duty <= target.duty + 1e-9 && passive)
        record(
            "radio: --power \(power), beacon advertising to enter",
            String(format: "median %.2f s, worst %.2f s (%d of %d runs)", median, worst, entered, runs),
            target: power == "high" ? "<= 1 s, as before" : String(format: "<= %.0f s", target.entry),
            met: entered == runs && worst <= target.entry)
        record(
            "radio: --power \(power), wake-ups with nothing in range",
            String(format: "%.2f /s over %d s", wakeups, quietSeconds), reference: "4 /s before (quarter-second ticks)",
            target: "<= 1 /s", met: wakeups <= 1.0)
    }
}
