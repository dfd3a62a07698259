import JSONCoding
import LoyaltyAPI
import LoyaltyClient

/// What the beacon tools that write a BTSnoop capture print once it is written.
extension ClientText {
    /// `beacon simulate`.
    public static func walkWritten(_ file: String, beacons: Int, seconds: Double) -> String {
        "wrote \(file): \(beacons) beacon(s) over \(String(format1: seconds)) s"
    }
}

extension ClientJSONLines {
    /// `beacon simulate --json`.
    public static func walkWritten(_ file: String, beacons: Int, seconds: Double) -> String {
        object([("file", .string(file)), ("beacons", .int(beacons)), ("seconds", .double(seconds))])
    }
}
