import Arguments
import BeaconRadio

extension RadioDiagnosis {
    /// What `loyalty doctor` prints: a line per check and its remedy, then whether beacons work here.
    public var reportLines: [String] {
        let width = checks.map(\.name.count).max() ?? 0
        var lines: [String] = []
        for check in checks {
            lines.append("\(check.status.rawValue.padding(7)) \(check.name.padding(width))  \(check.detail)")
            if let remedy = check.remedy { lines.append("        \(String(repeating: " ", count: width))  -> \(remedy)") }
        }
        lines.append(
            isMonitoringAvailable
                ? "Beacon monitoring and ranging are available."
                : "Beacon monitoring and ranging are not available here; `loyalty scan --replay FILE` still works.")
        return lines
    }
}
