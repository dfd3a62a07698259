import Beacons

extension HCICommand {
    /// The opcode as `beacon advertise --dry-run` shows it: 0x, then the 16 bits in hex, high byte first.
    public var opcodeText: String { "0x" + [UInt8(opcode >> 8), UInt8(opcode & 0xFF)].hexText() }

    /// `beacon advertise --dry-run`'s two lines: the opcode and name, then the packet's bytes.
    public var dryRunText: String { "\(opcodeText) \(name ?? "HCI command")\n  \(packet.hexText(separator: " "))" }
}
