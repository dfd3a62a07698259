extension RadioDiagnosis {
    /// What `loyalty doctor` prints: a line per check and its remedy, then whether beacons work here.
    public var reportLines: [String] {
        let width = checks.map(\.name.count).max() ?? 0
        func padded(_ text: String, _ width: Int) -> String {
            text + String(repeating: " ", count: max(0, width - text.count))
        }
        var lines: [String] = []
        for check in checks {
            lines.append("\(padded(check.status.rawValue, 7)) \(padded(check.name, width))  \(check.detail)")
            if let remedy = check.remedy { lines.append("        \(String(repeating: " ", count: width))  -> \(remedy)") }
        }
        lines.append(
            isMonitoringAvailable
                ? "Beacon monitoring and ranging are available."
                : "Beacon monitoring and ranging are not available here; `loyalty scan --replay FILE` still works.")
        return lines
    }
}
