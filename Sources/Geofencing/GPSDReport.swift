import Foundation

/// gpsd's JSON protocol (gpsd_json(5)): the command that starts reports, and the reading of a TPV
/// (time-position-velocity) report into a fix.
public enum GPSDReport {
    /// Sent once after connecting: JSON reports from every device gpsd watches.
    public static let watchCommand = #"?WATCH={"enable":true,"json":true}"# + "\n"

    /// The fix of a TPV line with a 2D or 3D fix, a position and a time; nil for other lines (VERSION,
    /// DEVICES, SKY...), TPVs without a fix, and lines that are not JSON.
    public static func fix(fromLine line: some StringProtocol) -> GeoFix? {
        guard line.contains("\"TPV\""),
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            object["class"] as? String == "TPV", (object["mode"] as? Int ?? 0) >= 2,
            let latitude = object["lat"] as? Double, let longitude = object["lon"] as? Double,
            let timeText = object["time"] as? String, let time = parseTime(timeText)
        else { return nil }
        let coordinate = GeoCoordinate(latitude: latitude, longitude: longitude)
        return coordinate.isValid ? GeoFix(time: time, coordinate: coordinate) : nil
    }

    /// ISO 8601 in UTC, with or without a fraction: `2026-01-01T00:00:01.000Z`.
    private static func parseTime(_ text: String) -> Double? {
        let fractional = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
        let plain = Date.ISO8601FormatStyle(timeZone: .gmt)
        return ((try? fractional.parse(text)) ?? (try? plain.parse(text)))?.timeIntervalSince1970
    }
}

/// What one gpsd connection has reported: fixes, and which receivers are active. A DEVICE report with
/// `"activated":0` means a receiver went away (unplugged, or the end of a gpsfake log).
public struct GPSDSession: Sendable {
    public private(set) var activeDevices: Set<String> = []
    private var hadDevice = false

    public init() {}

    /// Every receiver gpsd had is gone: no more fixes will come.
    public var receiversGone: Bool { hadDevice && activeDevices.isEmpty }

    /// Reads one line: the fix of a TPV report, nil for anything else (device changes are recorded).
    public mutating func read(_ line: some StringProtocol) -> GeoFix? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            return nil
        }
        switch object["class"] as? String {
        case "TPV":
            return GPSDReport.fix(fromLine: line)
        case "DEVICES":
            for device in object["devices"] as? [[String: Any]] ?? [] { note(device) }
        case "DEVICE":
            note(object)
        default:
            break
        }
        return nil
    }

    private mutating func note(_ device: [String: Any]) {
        guard let path = device["path"] as? String else { return }
        if device["activated"] is String {
            activeDevices.insert(path)
            hadDevice = true
        } else if device["activated"] != nil {  // 0: JSONSerialization's number, whatever its Swift type
            activeDevices.remove(path)
        }
    }
}
