import Beacons
import JSONCoding
import LoyaltyAPI

/// The JSON lines of `beacon advertise` and `beacon simulate`.
extension ClientJSONLines {
    /// `beacon simulate --json`.
    public static func walkWritten(_ file: String, beacons: Int, seconds: Double) -> String {
        object([("file", .string(file)), ("beacons", .int(beacons)), ("seconds", .double(seconds))])
    }

    /// `beacon advertise --json`'s first line; `via` is "hci" or "bluetoothd" (then `mode` is nil: the kernel
    /// chooses the HCI commands).
    public static func advertising(
        _ frame: BeaconFrame, intervalMilliseconds: Double, adapter: String, mode: String?, via: String
    ) -> String {
        let identity = frame.identity
        return advertising(
            [
                ("uuid", .string(identity.uuid.uuidString)), ("major", .int(Int(identity.major))),
                ("minor", .int(Int(identity.minor))),
            ], measuredPower: frame.measuredPower, intervalMilliseconds: intervalMilliseconds, adapter: adapter,
            mode: mode, via: via)
    }

    /// `beacon advertise --json`'s first line with the beacon's own `fields` (an Eddystone frame's).
    public static func advertising(
        _ fields: [(String, JSONValue)], measuredPower: Int8, intervalMilliseconds: Double, adapter: String,
        mode: String?, via: String
    ) -> String {
        object(
            [("event", .string("advertising")), ("adapter", .string(adapter))] + fields + [
                ("measured_power", .int(Int(measuredPower))), ("interval_ms", .double(intervalMilliseconds)),
                ("commands", mode.map(JSONValue.string) ?? .null), ("via", .string(via)),
            ])
    }

    /// `beacon advertise --json`'s last line.
    public static func advertisingStopped(adapter: String) -> String {
        object([("event", .string("stopped")), ("adapter", .string(adapter))])
    }

    /// `beacon advertise --dry-run --json`, one line per HCI command.
    public static func hciCommand(name: String, opcode: String, packet: String) -> String {
        object([("command", .string(name)), ("opcode", .string(opcode)), ("packet", .string(packet))])
    }

    /// `beacon advertise --write FILE --json`.
    public static func advertisingWritten(_ file: String, commands: Int) -> String {
        object([("file", .string(file)), ("commands", .int(commands)), ("advertising_reports", .int(1))])
    }
}
