import BeaconRadio
import Testing

// Byte layouts from the Bluetooth Core Specification, Vol 4, Part E: 5.4.1 (command packet) and
// 7.8.3, 7.8.10, 7.8.11, 7.8.64, 7.8.65 (the LE commands).
@Suite struct HCICommandTests {
    @Test func opcodeIsOGFAndOCFLittleEndian() {
        #expect(HCICommand(ogf: 0x03, ocf: 0x0003).packet == [0x03, 0x0C, 0x00])  // HCI_Reset, 0x0C03
        let command = HCICommand(ogf: 0x08, ocf: 0x000B, parameters: [0xAA])
        #expect(command.opcode == 0x200B)
        #expect(command.ogf == 0x08 && command.ocf == 0x000B)
        #expect(command.packet == [0x0B, 0x20, 0x01, 0xAA])
    }

    @Test func leReadLocalSupportedFeatures() {
        #expect(HCICommand.leReadLocalSupportedFeatures.packet == [0x03, 0x20, 0x00])
    }

    @Test func leSetScanParameters() throws {
        let active = try HCICommand.leSetScanParameters(LEScanOptions(active: true))
        #expect(active.packet == [0x0B, 0x20, 0x07, 0x01, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00])
        let passive = try HCICommand.leSetScanParameters(LEScanOptions(scanInterval: 0x1234, scanWindow: 0x0056))
        #expect(passive.packet == [0x0B, 0x20, 0x07, 0x00, 0x34, 0x12, 0x56, 0x00, 0x00, 0x00])
    }

    @Test func leSetScanEnable() {
        #expect(HCICommand.leSetScanEnable(true, filterDuplicates: true).packet == [0x0C, 0x20, 0x02, 0x01, 0x01])
        #expect(HCICommand.leSetScanEnable(false, filterDuplicates: false).packet == [0x0C, 0x20, 0x02, 0x00, 0x00])
    }

    @Test func leSetExtendedScanParametersForThe1MPHY() throws {
        let command = try HCICommand.leSetExtendedScanParameters(
            LEScanOptions(active: true, scanInterval: 0x8000, scanWindow: 0x0056))
        #expect(command.packet == [0x41, 0x20, 0x08, 0x00, 0x00, 0x01, 0x01, 0x00, 0x80, 0x56, 0x00])
    }

    @Test func leSetExtendedScanEnable() {
        #expect(
            HCICommand.leSetExtendedScanEnable(true, filterDuplicates: true).packet
                == [0x42, 0x20, 0x06, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00])
        #expect(
            HCICommand.leSetExtendedScanEnable(false, filterDuplicates: false).packet
                == [0x42, 0x20, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00])
    }

    @Test func scanParametersOutOfRangeAreRefused() throws {
        #expect(throws: RadioError.self) {
            try HCICommand.leSetScanParameters(LEScanOptions(scanInterval: 0x10, scanWindow: 0x11))
        }
        #expect(throws: RadioError.self) {
            try HCICommand.leSetScanParameters(LEScanOptions(scanInterval: 0x0003, scanWindow: 0x0003))
        }
        // 0x8000 is beyond the legacy command's 0x4000 but within the extended one's range.
        #expect(throws: RadioError.self) { try HCICommand.leSetScanParameters(LEScanOptions(scanInterval: 0x8000)) }
        _ = try HCICommand.leSetExtendedScanParameters(LEScanOptions(scanInterval: 0x8000))
    }

    @Test func extendedCommandsOnlyWithTheExtendedAdvertisingFeature() throws {
        let options = LEScanOptions(filterDuplicates: true)
        let extended = try LEScanCommands(features: [.extendedAdvertising, .le2MPHY], options: options)
        #expect(extended.usesExtendedScanning)
        #expect(
            [extended.parameters.opcode, extended.enable.opcode, extended.disable.opcode] == [0x2041, 0x2042, 0x2042])
        #expect(extended.enable.parameters.prefix(2) == [0x01, 0x01])
        #expect(extended.disable.parameters.prefix(1) == [0x00])
        // Every other feature bit set, the extended one clear: legacy.
        let legacy = try LEScanCommands(features: LEFeatures(rawValue: ~(1 << 12)), options: options)
        #expect(!legacy.usesExtendedScanning)
        #expect([legacy.parameters.opcode, legacy.enable.opcode, legacy.disable.opcode] == [0x200B, 0x200C, 0x200C])
        #expect(legacy.enable.parameters == [0x01, 0x01])
        #expect(legacy.disable.parameters == [0x00, 0x00])
    }

    @Test func featuresFromTheReturnParameters() throws {
        // Bit 12 is bit 4 of the second feature byte.
        let extended = try LEFeatures(returnParameters: [0x00, 0xFF, 0x10, 0, 0, 0, 0, 0, 0x80])
        #expect(extended.contains(.extendedAdvertising))
        #expect(extended.rawValue == 0x8000_0000_0000_10FF)
        let legacy = try LEFeatures(returnParameters: [0x00, 0xFF, 0xEF, 0, 0, 0, 0, 0, 0])
        #expect(!legacy.contains(.extendedAdvertising))
        #expect(throws: RadioError.commandFailed(opcode: 0x2003, status: 0x01)) {
            try LEFeatures(returnParameters: [0x01, 0, 0, 0, 0, 0, 0, 0, 0])
        }
        #expect(throws: RadioError.malformedResponse(opcode: 0x2003)) {
            try LEFeatures(returnParameters: [0x00, 0xFF])
        }
    }

    @Test func commandCompleteAndCommandStatus() throws {
        let complete = try #require(
            HCICommandResponse(event: [0x0E, 0x0C, 0x01, 0x03, 0x20, 0x00, 0xFF, 0x10, 0, 0, 0, 0, 0, 0]))
        #expect(complete.opcode == 0x2003)
        #expect(complete.status == 0)
        #expect(try LEFeatures(returnParameters: complete.returnParameters).contains(.extendedAdvertising))
        let status = try #require(HCICommandResponse(event: [0x0F, 0x04, 0x0C, 0x01, 0x0B, 0x20]))
        #expect(status.opcode == 0x200B)
        #expect(status.status == 0x0C)
        #expect(HCICommandResponse(event: [0x0E, 0x0C, 0x01, 0x03]) == nil, "length points past the end")
        #expect(HCICommandResponse(event: [0x3E, 0x01, 0x02]) == nil, "an LE meta event")
        #expect(HCICommandResponse(event: []) == nil)
    }
}
