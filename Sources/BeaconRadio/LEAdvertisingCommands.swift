import Beacons

/// A beacon to advertise: an iBeacon frame, or an Eddystone beacon whose data changes over time, and how often,
/// checked against what the HCI commands can carry.
public struct BeaconAdvertisement: Sendable {
    public enum Content: Sendable {
        case iBeacon(BeaconFrame)
        case eddystone(EddystoneBroadcast)
        /// A secure beacon's iBeacon form, whose major and minor change with its EID.
        case rotatingIBeacon(RotatingIBeacon)
    }

    public var content: Content
    /// Advertising_Interval in 0.625 ms units, 0x0020 (20 ms) ... 0x4000 (10.24 s): the legacy
    /// command's range, which the extended command's wider one contains.
    public let interval: UInt16

    public static let intervalUnitMilliseconds = 0.625
    public static let intervalRange: ClosedRange<UInt16> = 0x0020...0x4000

    /// `intervalMilliseconds` is rounded to the nearest 0.625 ms; outside 20 ms ... 10.24 s it throws.
    public init(frame: BeaconFrame, intervalMilliseconds: Double = 100) throws(RadioError) {
        try self.init(.iBeacon(frame), intervalMilliseconds: intervalMilliseconds)
    }

    public init(_ content: Content, intervalMilliseconds: Double = 100) throws(RadioError) {
        let units = (intervalMilliseconds / Self.intervalUnitMilliseconds).rounded()
        guard units.isFinite, units >= Double(Self.intervalRange.lowerBound),
            units <= Double(Self.intervalRange.upperBound)
        else {
            throw .invalidAdvertisingParameters(
                "the advertising interval must be 20 ms ... 10240 ms, got \(intervalMilliseconds) ms")
        }
        self.content = content
        interval = UInt16(units)
    }

    /// The interval actually programmed, after rounding to 0.625 ms units.
    public var intervalMilliseconds: Double { Double(interval) * Self.intervalUnitMilliseconds }

    /// The RSSI at 1 m the beacon advertises.
    public var measuredPower: Int8 {
        switch content {
        case .iBeacon(let frame): frame.measuredPower
        case .eddystone(let broadcast): broadcast.measuredPower
        case .rotatingIBeacon(let beacon): beacon.measuredPower
        }
    }

    /// The advertising data at the start: for an iBeacon, flags (LE General Discoverable, BR/EDR not supported)
    /// and its manufacturer data, 30 bytes.
    public var advertisingData: [UInt8] { advertisingData(elapsed: 0) }

    /// The advertising data `elapsed` seconds after advertising started: an Eddystone or rotating beacon's frame of
    /// then.
    public func advertisingData(elapsed: Double) -> [UInt8] {
        switch content {
        case .iBeacon(let frame):
            AdvertisingData.beacon(frame)
        case .eddystone(let broadcast):
            AdvertisingData.eddystone(broadcast.frame(elapsed: elapsed, intervalSeconds: intervalMilliseconds / 1000))
        case .rotatingIBeacon(let beacon):
            AdvertisingData.beacon(beacon.frame(elapsed: elapsed))
        }
    }

    /// When, after `elapsed` seconds, the advertising data may next change; nil when it never does.
    public func nextChange(after elapsed: Double) -> Double? {
        switch content {
        case .iBeacon: nil
        case .eddystone(let broadcast): broadcast.nextChange(after: elapsed, intervalSeconds: intervalMilliseconds / 1000)
        case .rotatingIBeacon(let beacon): beacon.timeCounter.nextTurn(after: elapsed)
        }
    }

    /// The LE Advertising Report a scanner receives for one of these advertisements `elapsed` seconds after the
    /// start, sent from `address` (public, as the commands program it) and heard at `rssi`: the measured power, as
    /// if 1 m away, unless given.
    public func report(from address: BluetoothAddress, rssi: Int8? = nil, elapsed: Double = 0) -> AdvertisingReport {
        AdvertisingReport(
            format: .legacy, eventType: UInt16(HCICommand.advNonconnInd),
            addressType: HCICommand.ownPublicAddress,
            address: address, rssi: rssi ?? measuredPower, data: advertisingData(elapsed: elapsed))
    }
}

extension HCICommand {
    /// Legacy advertising type ADV_NONCONN_IND: non-connectable, non-scannable, undirected (a beacon).
    static let advNonconnInd: UInt8 = 0x03
    /// Advertising channels 37, 38 and 39.
    static let allAdvertisingChannels: UInt8 = 0x07
    static let processAllRequests: UInt8 = 0x00

    /// HCI_LE_Set_Advertising_Parameters (0x2006, Vol 4 Part E 7.8.5): Advertising_Interval_Min and _Max
    /// (2 bytes each), Advertising_Type, Own_Address_Type, Peer_Address_Type, Peer_Address (6 bytes),
    /// Advertising_Channel_Map, Advertising_Filter_Policy: 15 bytes.
    public static func leSetAdvertisingParameters(_ advertisement: BeaconAdvertisement) -> HCICommand {
        let interval = advertisement.interval.littleEndianBytes
        return HCICommand(
            ogf: leControllerGroup, ocf: 0x0006,
            parameters: interval + interval + [advNonconnInd, ownPublicAddress]
                + [0x00, 0, 0, 0, 0, 0, 0]  // no peer: undirected
                + [allAdvertisingChannels, processAllRequests])
    }

    /// HCI_LE_Set_Advertising_Data (0x2008, 7.8.7): Advertising_Data_Length, then Advertising_Data, always
    /// 31 bytes (the significant part, zero-padded): 32 bytes.
    public static func leSetAdvertisingData(_ data: [UInt8]) throws(RadioError) -> HCICommand {
        guard data.count <= legacyAdvertisingDataMaximum else {
            throw .invalidAdvertisingParameters(
                "legacy advertising data holds at most 31 bytes, got \(data.count)")
        }
        let padding = [UInt8](repeating: 0, count: legacyAdvertisingDataMaximum - data.count)
        return HCICommand(
            ogf: leControllerGroup, ocf: 0x0008, parameters: [UInt8(data.count)] + data + padding)
    }

    /// HCI_LE_Set_Advertising_Enable (0x200A, 7.8.9): Advertising_Enable (1 byte).
    public static func leSetAdvertisingEnable(_ enable: Bool) -> HCICommand {
        HCICommand(ogf: leControllerGroup, ocf: 0x000A, parameters: [enable ? 0x01 : 0x00])
    }

    /// HCI_LE_Set_Extended_Advertising_Parameters (0x2036, 7.8.53): Advertising_Handle,
    /// Advertising_Event_Properties (2 bytes), Primary_Advertising_Interval_Min and _Max (3 bytes each),
    /// Primary_Advertising_Channel_Map, Own_Address_Type, Peer_Address_Type, Peer_Address (6 bytes),
    /// Advertising_Filter_Policy, Advertising_TX_Power, Primary_Advertising_PHY, Secondary_Advertising_Max_Skip,
    /// Secondary_Advertising_PHY, Advertising_SID, Scan_Request_Notification_Enable: 25 bytes.
    ///
    /// The event properties set only "use legacy advertising PDUs" (bit 4): with connectable, scannable and
    /// directed clear, that is ADV_NONCONN_IND, which every scanner hears, old ones included.
    public static func leSetExtendedAdvertisingParameters(
        _ advertisement: BeaconAdvertisement, handle: UInt8 = 0
    ) -> HCICommand {
        let interval = advertisement.interval.littleEndianBytes + [0x00]
        let legacyPDUs: UInt16 = 1 << 4
        let noTxPowerPreference: UInt8 = 0x7F
        let le1MPHY: UInt8 = 0x01
        return HCICommand(
            ogf: leControllerGroup, ocf: 0x0036,
            parameters: [handle] + legacyPDUs.littleEndianBytes + interval + interval
                + [allAdvertisingChannels, ownPublicAddress]
                + [0x00, 0, 0, 0, 0, 0, 0]  // no peer: undirected
                + [processAllRequests, noTxPowerPreference, le1MPHY]
                + [0x00, le1MPHY, 0x00, 0x00])  // max skip, secondary PHY (unused by legacy PDUs), SID, no notifications
    }

    /// HCI_LE_Set_Extended_Advertising_Data (0x2037, 7.8.54): Advertising_Handle, Operation (0x03: complete
    /// data), Fragment_Preference (0x01: the controller should not fragment), Advertising_Data_Length,
    /// Advertising_Data (unpadded). Legacy PDUs carry at most 31 bytes.
    public static func leSetExtendedAdvertisingData(_ data: [UInt8], handle: UInt8 = 0)
        throws(RadioError)
        -> HCICommand
    {
        guard data.count <= legacyAdvertisingDataMaximum else {
            throw .invalidAdvertisingParameters(
                "legacy advertising data holds at most 31 bytes, got \(data.count)")
        }
        let completeData: UInt8 = 0x03
        let doNotFragment: UInt8 = 0x01
        return HCICommand(
            ogf: leControllerGroup, ocf: 0x0037,
            parameters: [handle, completeData, doNotFragment, UInt8(data.count)] + data)
    }

    /// HCI_LE_Set_Extended_Advertising_Enable (0x2039, 7.8.56): Enable, Num_Sets (1), then for the set:
    /// Advertising_Handle, Duration (2 bytes, 10 ms units) and Max_Extended_Advertising_Events, both 0:
    /// advertise until disabled.
    public static func leSetExtendedAdvertisingEnable(_ enable: Bool, handle: UInt8 = 0) -> HCICommand {
        HCICommand(
            ogf: leControllerGroup, ocf: 0x0039,
            parameters: [enable ? 0x01 : 0x00, 0x01, handle, 0x00, 0x00, 0x00])
    }

    private static let legacyAdvertisingDataMaximum = 31
}

/// The commands that start and stop advertising a beacon, chosen from the controller's LE features (never
/// from its HCI version): the extended commands only when LE Extended Advertising is supported. A controller
/// refuses legacy advertising commands once extended ones were used, and the kernel uses the extended ones
/// whenever the feature is there.
public struct LEAdvertisingCommands: Hashable, Sendable {
    public var usesExtendedAdvertising: Bool
    public var parameters: HCICommand
    public var data: HCICommand
    public var enable: HCICommand
    public var disable: HCICommand

    public init(features: LEFeatures, advertisement: BeaconAdvertisement) throws(RadioError) {
        try self.init(extended: features.contains(.extendedAdvertising), advertisement: advertisement)
    }

    /// The legacy set (`extended` false) or the extended one, whatever a controller supports: for dry runs.
    public init(extended: Bool, advertisement: BeaconAdvertisement) throws(RadioError) {
        usesExtendedAdvertising = extended
        if extended {
            parameters = .leSetExtendedAdvertisingParameters(advertisement)
            data = try .leSetExtendedAdvertisingData(advertisement.advertisingData)
            enable = .leSetExtendedAdvertisingEnable(true)
            disable = .leSetExtendedAdvertisingEnable(false)
        } else {
            parameters = .leSetAdvertisingParameters(advertisement)
            data = try .leSetAdvertisingData(advertisement.advertisingData)
            enable = .leSetAdvertisingEnable(true)
            disable = .leSetAdvertisingEnable(false)
        }
    }

    /// In the order they are sent: parameters, data, enable.
    public var start: [HCICommand] { [parameters, data, enable] }

    /// The command that replaces the advertising data while advertising (both sets allow it for legacy PDUs).
    public func replacingData(_ advertisingData: [UInt8]) throws(RadioError) -> HCICommand {
        usesExtendedAdvertising
            ? try .leSetExtendedAdvertisingData(advertisingData) : try .leSetAdvertisingData(advertisingData)
    }
}

extension HCICommand {
    /// The command's name in the Core specification (Vol 4, Part E, 7.8), for dry runs and messages; nil for
    /// commands this package does not send.
    public var name: String? {
        switch opcode {
        case 0x2003: "LE Read Local Supported Features"
        case 0x2006: "LE Set Advertising Parameters"
        case 0x2008: "LE Set Advertising Data"
        case 0x200A: "LE Set Advertising Enable"
        case 0x200B: "LE Set Scan Parameters"
        case 0x200C: "LE Set Scan Enable"
        case 0x2036: "LE Set Extended Advertising Parameters"
        case 0x2037: "LE Set Extended Advertising Data"
        case 0x2039: "LE Set Extended Advertising Enable"
        case 0x2041: "LE Set Extended Scan Parameters"
        case 0x2042: "LE Set Extended Scan Enable"
        default: nil
        }
    }
}
