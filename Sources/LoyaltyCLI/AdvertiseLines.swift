import Beacons
import JSONCoding
import LoyaltyAPI
import LoyaltyClient

extension ClientText {
    /// `beacon advertise`'s first line: the beacon, its power and interval, the adapter, the kind of HCI
    /// commands (`mode`: legacy or extended; nil when bluetoothd advertises it), and how long it advertises.
    public static func advertising(
        _ frame: BeaconFrame, intervalMilliseconds: Double, adapter: String, mode: String?, duration: Double?
    ) -> String {
        let until = duration.map { "for \(String(format1: $0)) s" } ?? "until Ctrl-C"
        let path = mode.map { "\($0) commands" } ?? "through bluetoothd"
        return "advertising \(frame.identity) at \(frame.measuredPower) dBm every "
            + "\(String(format1: intervalMilliseconds)) ms on \(adapter) (\(path)) \(until)"
    }

    /// `beacon advertise --write FILE`: the `commands` HCI commands and the report written.
    public static func advertisingWritten(_ file: String, commands: Int) -> String {
        "wrote \(file): \(commands) HCI commands and the advertising report a scanner 1 m away receives"
    }
}

extension ClientJSONLines {
    /// `beacon advertise --json`'s first line; `via` is "hci" or "bluetoothd" (then `mode` is nil: the kernel
    /// chooses the HCI commands).
    public static func advertising(
        _ frame: BeaconFrame, intervalMilliseconds: Double, adapter: String, mode: String?, via: String
    ) -> String {
        let identity = frame.identity
        return object([
            ("event", .string("advertising")), ("adapter", .string(adapter)),
            ("uuid", .string(identity.uuid.uuidString)), ("major", .int(Int(identity.major))),
            ("minor", .int(Int(identity.minor))), ("measured_power", .int(Int(frame.measuredPower))),
            ("interval_ms", .double(intervalMilliseconds)), ("commands", mode.map(JSONValue.string) ?? .null),
            ("via", .string(via)),
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
