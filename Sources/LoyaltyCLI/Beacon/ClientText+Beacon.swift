import Beacons
import JSONCoding
import LoyaltyAPI

/// What the beacon tools print: `beacon advertise`, `beacon calibrate`, `beacon simulate`.
extension ClientText {
    /// `beacon advertise`'s first line: the beacon, its power and interval, the adapter, the kind of HCI
    /// commands (`mode`: legacy or extended; nil when bluetoothd advertises it), and how long it advertises.
    public static func advertising(
        _ frame: BeaconFrame, intervalMilliseconds: Double, adapter: String, mode: String?, duration: Double?
    ) -> String {
        advertising(
            "\(frame.identity)", measuredPower: frame.measuredPower, intervalMilliseconds: intervalMilliseconds,
            adapter: adapter, mode: mode, duration: duration)
    }

    /// `beacon advertise`'s first line for `beacon`, as words say it (an iBeacon's identity, an Eddystone frame).
    public static func advertising(
        _ beacon: String, measuredPower: Int8, intervalMilliseconds: Double, adapter: String, mode: String?,
        duration: Double?
    ) -> String {
        let until = duration.map { "for \(String(format1: $0)) s" } ?? "until Ctrl-C"
        let path = mode.map { "\($0) commands" } ?? "through bluetoothd"
        return "advertising \(beacon) at \(measuredPower) dBm every "
            + "\(String(format1: intervalMilliseconds)) ms on \(adapter) (\(path)) \(until)"
    }

    /// `beacon advertise --write FILE`: the `commands` HCI commands and the report written.
    public static func advertisingWritten(_ file: String, commands: Int) -> String {
        "wrote \(file): \(commands) HCI commands and the advertising report a scanner 1 m away receives"
    }

    /// `beacon calibrate`'s report.
    public static func calibration(
        _ calibration: MeasuredPowerCalibration, of identity: BeaconIdentity, advertised: Int8?, seconds: Double
    ) -> String {
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
        return text
    }

    /// `beacon simulate`.
    public static func walkWritten(_ file: String, beacons: Int, seconds: Double) -> String {
        "wrote \(file): \(beacons) beacon(s) over \(String(format1: seconds)) s"
    }
}

