import BeaconRadio
import Beacons
import Foundation
import Testing

// Byte layouts from the Bluetooth Core Specification, Vol 4, Part E, 7.8.5, 7.8.7, 7.8.9 (legacy advertising)
// and 7.8.53, 7.8.54, 7.8.56 (extended advertising), as Linux's include/net/bluetooth/hci.h and BlueZ's
// lib/hci.h lay them out. Every expected byte is written out by hand.
@Suite struct AdvertisingCommandTests {
    static let matey = UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!
    static let frame = BeaconFrame(
        kind: .iBeacon, identity: BeaconIdentity(uuid: matey, major: 1, minor: 2), measuredPower: -59)

    /// The iBeacon advertisement, 30 bytes.
    static let advertisingData: [UInt8] = fields(
        [0x02, 0x01, 0x06],  // AD length 2, type Flags, LE General Discoverable | BR/EDR Not Supported
        [0x1A, 0xFF],  // AD length 26, type Manufacturer Specific Data
        [0x4C, 0x00],  // company identifier 0x004C (Apple), little-endian
        [0x02, 0x15],  // iBeacon type 0x02, remaining length 0x15 (21)
        [
            0x8F, 0x0C, 0x1D, 0xDC, 0x11, 0xE5, 0x4A, 0x07, 0x89, 0x10, 0x42, 0x59, 0x41, 0xB0, 0x72,
            0xF9,
        ],  // UUID
        [0x00, 0x01],  // major 1, big-endian
        [0x00, 0x02],  // minor 2, big-endian
        [0xC5])  // measured power -59 dBm, two's complement

    @Test func advertisingDataIsTheIBeaconLayout() throws {
        let advertisement = try BeaconAdvertisement(frame: Self.frame)
        #expect(advertisement.advertisingData == Self.advertisingData)
        #expect(advertisement.advertisingData.count == 30)
        #expect(try AdvertisingData.beaconFrames(in: advertisement.advertisingData) == [Self.frame])
    }

    @Test func leSetAdvertisingParameters() throws {
        let command = HCICommand.leSetAdvertisingParameters(try BeaconAdvertisement(frame: Self.frame))
        #expect(
            command.packet
                == fields(
                    [0x06, 0x20],  // opcode 0x2006: OGF 0x08, OCF 0x0006
                    [0x0F],  // parameter length 15
                    [0xA0, 0x00],  // Advertising_Interval_Min 160 x 0.625 ms = 100 ms
                    [0xA0, 0x00],  // Advertising_Interval_Max, the same
                    [0x03],  // Advertising_Type ADV_NONCONN_IND
                    [0x00],  // Own_Address_Type public
                    [0x00],  // Peer_Address_Type (unused: undirected)
                    [0x00, 0x00, 0x00, 0x00, 0x00, 0x00],  // Peer_Address (unused)
                    [0x07],  // Advertising_Channel_Map: channels 37, 38 and 39
                    [0x00]))  // Advertising_Filter_Policy: process all scan and connection requests
        #expect(command.name == "LE Set Advertising Parameters")
    }

    @Test func leSetAdvertisingDataIsPaddedTo31Bytes() throws {
        let command = try HCICommand.leSetAdvertisingData(Self.advertisingData)
        #expect(
            command.packet
                == fields(
                    [0x08, 0x20],  // opcode 0x2008
                    [0x20],  // parameter length 32
                    [0x1E],  // Advertising_Data_Length 30
                    Self.advertisingData,  // Advertising_Data
                    [0x00]))  // padding to 31 bytes
        #expect(throws: RadioError.self) {
            try HCICommand.leSetAdvertisingData([UInt8](repeating: 0, count: 32))
        }
    }

    @Test func leSetAdvertisingEnable() {
        #expect(HCICommand.leSetAdvertisingEnable(true).packet == [0x0A, 0x20, 0x01, 0x01])  // opcode 0x200A, enable
        #expect(HCICommand.leSetAdvertisingEnable(false).packet == [0x0A, 0x20, 0x01, 0x00])  // disable
        #expect(HCICommand.leSetAdvertisingEnable(true).name == "LE Set Advertising Enable")
    }

    @Test func leSetExtendedAdvertisingParametersUseALegacyNonConnectablePDU() throws {
        let advertisement = try BeaconAdvertisement(frame: Self.frame, intervalMilliseconds: 1000)
        let command = HCICommand.leSetExtendedAdvertisingParameters(advertisement)
        #expect(
            command.packet
                == fields(
                    [0x36, 0x20],  // opcode 0x2036: OGF 0x08, OCF 0x0036
                    [0x19],  // parameter length 25
                    [0x00],  // Advertising_Handle 0
                    [0x10, 0x00],  // Advertising_Event_Properties: bit 4 legacy PDU only = ADV_NONCONN_IND
                    [0x40, 0x06, 0x00],  // Primary_Advertising_Interval_Min 1600 x 0.625 ms = 1 s, 3 bytes
                    [0x40, 0x06, 0x00],  // Primary_Advertising_Interval_Max, the same
                    [0x07],  // Primary_Advertising_Channel_Map: 37, 38, 39
                    [0x00],  // Own_Address_Type public
                    [0x00],  // Peer_Address_Type (unused)
                    [0x00, 0x00, 0x00, 0x00, 0x00, 0x00],  // Peer_Address (unused)
                    [0x00],  // Advertising_Filter_Policy
                    [0x7F],  // Advertising_TX_Power: no preference
                    [0x01],  // Primary_Advertising_PHY LE 1M (legacy PDUs require it)
                    [0x00],  // Secondary_Advertising_Max_Skip
                    [0x01],  // Secondary_Advertising_PHY LE 1M
                    [0x00],  // Advertising_SID
                    [0x00]))  // Scan_Request_Notification_Enable off
        #expect(command.name == "LE Set Extended Advertising Parameters")
    }

    @Test func leSetExtendedAdvertisingData() throws {
        let command = try HCICommand.leSetExtendedAdvertisingData(Self.advertisingData)
        #expect(
            command.packet
                == fields(
                    [0x37, 0x20],  // opcode 0x2037
                    [0x22],  // parameter length 34
                    [0x00],  // Advertising_Handle 0
                    [0x03],  // Operation: complete advertising data
                    [0x01],  // Fragment_Preference: the controller should not fragment
                    [0x1E],  // Advertising_Data_Length 30
                    Self.advertisingData))  // Advertising_Data, unpadded
        #expect(throws: RadioError.self) {
            try HCICommand.leSetExtendedAdvertisingData([UInt8](repeating: 0, count: 32))
        }
    }

    @Test func leSetExtendedAdvertisingEnable() {
        #expect(
            HCICommand.leSetExtendedAdvertisingEnable(true).packet
                == fields(
                    [0x39, 0x20],  // opcode 0x2039
                    [0x06],  // parameter length 6
                    [0x01],  // Enable
                    [0x01],  // Num_Sets 1
                    [0x00],  // Advertising_Handle[0] 0
                    [0x00, 0x00],  // Duration[0]: until disabled
                    [0x00]))  // Max_Extended_Advertising_Events[0]: no limit
        #expect(
            HCICommand.leSetExtendedAdvertisingEnable(false, handle: 3).packet
                == [0x39, 0x20, 0x06, 0x00, 0x01, 0x03, 0x00, 0x00, 0x00])
    }

    @Test func intervalIsRoundedToUnitsAndRangeChecked() throws {
        #expect(try BeaconAdvertisement(frame: Self.frame, intervalMilliseconds: 20).interval == 0x0020)
        #expect(
            try BeaconAdvertisement(frame: Self.frame, intervalMilliseconds: 10_240).interval == 0x4000)
        let rounded = try BeaconAdvertisement(frame: Self.frame, intervalMilliseconds: 152.5)  // 244 units exactly
        #expect(rounded.interval == 244 && rounded.intervalMilliseconds == 152.5)
        #expect(try BeaconAdvertisement(frame: Self.frame, intervalMilliseconds: 100.2).interval == 160)
        for bad in [19.5, 10_241, 0, -100, .nan, .infinity] {
            #expect(throws: RadioError.self, "\(bad) ms") {
                try BeaconAdvertisement(frame: Self.frame, intervalMilliseconds: bad)
            }
        }
        let error = #expect(throws: RadioError.self) {
            try BeaconAdvertisement(frame: Self.frame, intervalMilliseconds: 5)
        }
        #expect(error?.description.contains("20 ms ... 10240 ms") == true, "\(String(describing: error))")
    }

    @Test func extendedCommandsOnlyWithTheExtendedAdvertisingFeature() throws {
        let advertisement = try BeaconAdvertisement(frame: Self.frame)
        let extended = try LEAdvertisingCommands(
            features: [.extendedAdvertising], advertisement: advertisement)
        #expect(extended.usesExtendedAdvertising)
        #expect(extended.start.map(\.opcode) == [0x2036, 0x2037, 0x2039])
        #expect(extended.disable.opcode == 0x2039 && extended.disable.parameters.first == 0x00)
        let legacy = try LEAdvertisingCommands(
            features: LEFeatures(rawValue: ~(1 << 12)), advertisement: advertisement)
        #expect(!legacy.usesExtendedAdvertising)
        #expect(legacy.start.map(\.opcode) == [0x2006, 0x2008, 0x200A])
        #expect(legacy.disable == .leSetAdvertisingEnable(false))
    }

    @Test func theReportAScannerReceivesCarriesTheSameFrame() throws {
        let advertisement = try BeaconAdvertisement(frame: Self.frame)
        let address = BluetoothAddress(wire: (0x11, 0x22, 0x33, 0x44, 0x55, 0x66))
        let event = try HCIEvent.advertisingReportEvent(
            [advertisement.report(from: address)], format: .legacy)
        let reports = try HCIEvent.advertisingReports(inPacket: event)
        #expect(reports.count == 1)
        #expect(reports[0].eventType == 0x03)  // ADV_NONCONN_IND
        #expect(reports[0].addressType == 0x00 && reports[0].address == address)
        #expect(reports[0].rssi == -59)  // heard at 1 m
        #expect(try AdvertisingData.beaconFrames(in: reports[0].data) == [Self.frame])
        #expect(advertisement.report(from: address, rssi: -70).rssi == -70)
    }

    /// This machine may or may not have Bluetooth: the advertiser fails for the reason the diagnosis gives,
    /// with the typed error, never a crash.
    @Test func liveAdvertisingFailsForTheReasonTheDiagnosisGives() throws {
        let diagnosis = RadioDiagnosis.examine()
        let kernel = try #require(diagnosis.checks.first { $0.name == "kernel" })
        let advertisement = try BeaconAdvertisement(frame: Self.frame)
        do {
            let advertiser = try BeaconAdvertiser(advertisement: advertisement)
            #expect(
                diagnosis.isMonitoringAvailable, "opened \(advertiser.adapter), yet \(diagnosis.checks)")
        } catch {
            if kernel.status == .failed {
                #expect(error == .bluetoothUnavailableInKernel)
                #expect(error.description.contains("AF_BLUETOOTH"))
            } else {
                #expect(!diagnosis.isMonitoringAvailable, "\(error)")
            }
        }
        #expect(throws: RadioError.self) {
            try BeaconAdvertiser(transport: .kernel("hci99"), advertisement: advertisement)
        }
    }
}

/// A packet written field by field.
func fields(_ fields: [UInt8]...) -> [UInt8] { fields.flatMap { $0 } }
