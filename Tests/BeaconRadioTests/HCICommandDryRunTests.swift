import BeaconRadio
import Testing

/// What `beacon advertise --dry-run` prints for a command.
@Suite struct HCICommandDryRunTests {
    @Test func dryRunShowsOpcodeNameAndPacket() {
        let command = HCICommand(ogf: 0x08, ocf: 0x000A, parameters: [0x01])
        #expect(command.opcodeText == "0x200A")
        #expect(command.dryRunText == "0x200A LE Set Advertising Enable\n  0A 20 01 01")
        let unnamed = HCICommand(ogf: 0x03, ocf: 0x0003)
        #expect(unnamed.dryRunText == "0x0C03 HCI command\n  03 0C 00")
    }
}
