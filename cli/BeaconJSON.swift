import Beacons

/// The JSON fields every command uses for one beacon frame: kind, uuid, major, minor, tx_power.
func frameFields(_ frame: BeaconFrame) -> [(String, JSONValue)] {
    [
        ("kind", .string(frame.kind.rawValue)),
        ("uuid", .string(frame.identity.uuid.uuidString)),
        ("major", .int(Int(frame.identity.major))),
        ("minor", .int(Int(frame.identity.minor))),
        ("tx_power", .int(Int(frame.measuredPower))),
    ]
}

/// Seconds rounded for output: whole milliseconds.
func roundedSeconds(_ t: Double) -> JSONValue { .double((t * 1000).rounded() / 1000) }

/// Parses hex as people paste it: `0x`, spaces, colons and dashes are ignored.
func parseHex(_ text: String) -> [UInt8]? {
    var digits = Substring(text)
    if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
    let nibbles = digits.unicodeScalars.filter { !" :-\t".unicodeScalars.contains($0) }
    guard nibbles.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(nibbles.count / 2)
    var high: UInt8? = nil
    for scalar in nibbles {
        guard let value = UInt8(String(scalar), radix: 16) else { return nil }
        if let h = high {
            bytes.append(h << 4 | value)
            high = nil
        } else {
            high = value
        }
    }
    return bytes
}
