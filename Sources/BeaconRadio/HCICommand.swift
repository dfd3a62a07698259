/// An HCI command packet, built byte for byte (Bluetooth Core, Vol 4, Part E, 5.4.1): the opcode
/// `OGF << 10 | OCF` little-endian, the parameter length, the parameters. Multi-byte parameters are
/// little-endian. The H4 packet indicator (0x01) is not part of it: the HCI socket writer adds it.
public struct HCICommand: Hashable, Sendable {
    public var opcode: UInt16
    public var parameters: [UInt8]

    /// LE Controller commands (OGF 0x08).
    public static let leControllerGroup: UInt8 = 0x08

    public init(ogf: UInt8, ocf: UInt16, parameters: [UInt8] = []) {
        precondition(ogf < 0x40 && ocf < 0x400 && parameters.count <= 255, "not an HCI opcode")
        opcode = UInt16(ogf) << 10 | ocf
        self.parameters = parameters
    }

    public var ogf: UInt8 { UInt8(opcode >> 10) }
    public var ocf: UInt16 { opcode & 0x3FF }

    /// The packet as it goes to the controller.
    public var packet: [UInt8] {
        [UInt8(opcode & 0xFF), UInt8(opcode >> 8), UInt8(parameters.count)] + parameters
    }

    /// HCI_LE_Read_Local_Supported_Features (0x2003, Vol 4 Part E 7.8.3): no parameters; returns the
    /// status and eight bytes of LE feature bits.
    public static let leReadLocalSupportedFeatures = HCICommand(ogf: leControllerGroup, ocf: 0x0003)

    /// HCI_LE_Set_Scan_Parameters (0x200B, 7.8.10): LE_Scan_Type, LE_Scan_Interval, LE_Scan_Window,
    /// Own_Address_Type, Scanning_Filter_Policy (7 bytes).
    public static func leSetScanParameters(_ options: LEScanOptions) throws(RadioError) -> HCICommand {
        try options.validate(maximum: 0x4000)
        return HCICommand(
            ogf: leControllerGroup, ocf: 0x000B,
            parameters: [options.active ? 0x01 : 0x00] + options.scanInterval.littleEndianBytes
                + options.scanWindow.littleEndianBytes + [ownPublicAddress, acceptAllAdvertisements])
    }

    /// HCI_LE_Set_Scan_Enable (0x200C, 7.8.11): LE_Scan_Enable, Filter_Duplicates (2 bytes).
    public static func leSetScanEnable(_ enable: Bool, filterDuplicates: Bool) -> HCICommand {
        HCICommand(
            ogf: leControllerGroup, ocf: 0x000C,
            parameters: [enable ? 0x01 : 0x00, filterDuplicates ? 0x01 : 0x00])
    }

    /// HCI_LE_Set_Extended_Scan_Parameters (0x2041, 7.8.64): Own_Address_Type, Scanning_Filter_Policy,
    /// Scanning_PHYs, then Scan_Type, Scan_Interval, Scan_Window for each PHY bit set. Only the LE 1M
    /// PHY is scanned: iBeacon and AltBeacon frames are legacy advertisements, which use it.
    public static func leSetExtendedScanParameters(_ options: LEScanOptions) throws(RadioError) -> HCICommand {
        try options.validate(maximum: 0xFFFF)
        let le1MPHY: UInt8 = 0x01
        return HCICommand(
            ogf: leControllerGroup, ocf: 0x0041,
            parameters: [ownPublicAddress, acceptAllAdvertisements, le1MPHY, options.active ? 0x01 : 0x00]
                + options.scanInterval.littleEndianBytes + options.scanWindow.littleEndianBytes)
    }

    /// HCI_LE_Set_Extended_Scan_Enable (0x2042, 7.8.65): Enable, Filter_Duplicates, Duration (10 ms
    /// units) and Period (1.28 s units), both 0 here: scan until disabled.
    public static func leSetExtendedScanEnable(_ enable: Bool, filterDuplicates: Bool) -> HCICommand {
        HCICommand(
            ogf: leControllerGroup, ocf: 0x0042,
            parameters: [enable ? 0x01 : 0x00, filterDuplicates ? 0x01 : 0x00, 0x00, 0x00, 0x00, 0x00])
    }

    static let ownPublicAddress: UInt8 = 0x00
    private static let acceptAllAdvertisements: UInt8 = 0x00
}

extension UInt16 {
    var littleEndianBytes: [UInt8] { [UInt8(self & 0xFF), UInt8(self >> 8)] }
}

/// How to scan.
public struct LEScanOptions: Hashable, Sendable {
    /// Active scanning sends scan requests (and gets scan responses); passive only listens, which is
    /// all a beacon needs.
    public var active: Bool
    /// Let the controller drop repeated advertisements. Off by default: ranging needs every reading.
    public var filterDuplicates: Bool
    /// LE_Scan_Interval in 0.625 ms units (0x0004 and up).
    public var scanInterval: UInt16
    /// LE_Scan_Window in 0.625 ms units, at most the interval.
    public var scanWindow: UInt16

    /// Passive, every advertisement, listening all the time (window = interval = 10 ms).
    public init(
        active: Bool = false, filterDuplicates: Bool = false, scanInterval: UInt16 = 0x0010, scanWindow: UInt16 = 0x0010
    ) {
        self.active = active
        self.filterDuplicates = filterDuplicates
        self.scanInterval = scanInterval
        self.scanWindow = scanWindow
    }

    fileprivate func validate(maximum: UInt16) throws(RadioError) {
        guard (0x0004...maximum).contains(scanInterval), (0x0004...maximum).contains(scanWindow) else {
            throw .invalidScanParameters(
                "scan interval and window must be 4...\(maximum) (units of 0.625 ms), got \(scanInterval) and \(scanWindow)"
            )
        }
        guard scanWindow <= scanInterval else {
            throw .invalidScanParameters("scan window (\(scanWindow)) must not exceed scan interval (\(scanInterval))")
        }
    }
}

/// The controller's LE feature bits (Vol 6, Part B, 4.6), from LE Read Local Supported Features.
public struct LEFeatures: OptionSet, Hashable, Sendable {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let le2MPHY = LEFeatures(rawValue: 1 << 8)
    /// LE Extended Advertising: the controller takes the extended scan commands.
    public static let extendedAdvertising = LEFeatures(rawValue: 1 << 12)

    /// From the command's return parameters: Status, then LE_Features (8 bytes, little-endian).
    public init(returnParameters: [UInt8]) throws(RadioError) {
        let opcode = HCICommand.leReadLocalSupportedFeatures.opcode
        guard returnParameters.count >= 9 else { throw .malformedResponse(opcode: opcode) }
        guard returnParameters[0] == 0 else { throw .commandFailed(opcode: opcode, status: returnParameters[0]) }
        var bits: UInt64 = 0
        for (index, byte) in returnParameters[1...8].enumerated() { bits |= UInt64(byte) << (8 * UInt64(index)) }
        rawValue = bits
    }
}

/// The commands that start and stop scanning, chosen from the controller's LE features (never from
/// its HCI version): the extended commands only when LE Extended Advertising is supported.
public struct LEScanCommands: Hashable, Sendable {
    public var usesExtendedScanning: Bool
    public var parameters: HCICommand
    public var enable: HCICommand
    public var disable: HCICommand

    public init(features: LEFeatures, options: LEScanOptions) throws(RadioError) {
        usesExtendedScanning = features.contains(.extendedAdvertising)
        if usesExtendedScanning {
            parameters = try .leSetExtendedScanParameters(options)
            enable = .leSetExtendedScanEnable(true, filterDuplicates: options.filterDuplicates)
            disable = .leSetExtendedScanEnable(false, filterDuplicates: false)
        } else {
            parameters = try .leSetScanParameters(options)
            enable = .leSetScanEnable(true, filterDuplicates: options.filterDuplicates)
            disable = .leSetScanEnable(false, filterDuplicates: false)
        }
    }
}

/// The controller's answer to a command: Command Complete (0x0E) or Command Status (0x0F).
public struct HCICommandResponse: Hashable, Sendable {
    public var opcode: UInt16
    /// The status byte: 0 is success.
    public var status: UInt8
    /// Command Complete's return parameters (starting with the status); empty for Command Status.
    public var returnParameters: [UInt8]

    /// Reads a bare HCI event (event code, length, parameters); nil when it is not a well-formed
    /// Command Complete or Command Status.
    public init?(event: [UInt8]) {
        guard event.count >= 2, event.count == 2 + Int(event[1]) else { return nil }
        switch event[0] {
        case 0x0E where event.count >= 5:
            // Num_HCI_Command_Packets, Command_Opcode, Return_Parameters.
            opcode = UInt16(event[3]) | UInt16(event[4]) << 8
            returnParameters = Array(event[5...])
            status = returnParameters.first ?? 0
        case 0x0F where event.count == 6:
            // Status, Num_HCI_Command_Packets, Command_Opcode.
            status = event[2]
            opcode = UInt16(event[4]) | UInt16(event[5]) << 8
            returnParameters = []
        default:
            return nil
        }
    }
}
