import Beacons
@testable import DBus
import Foundation
import Testing

@testable import BeaconRadio

/// What the BlueZ path hands the scan: bluetoothd's device properties as the LE Advertising Report a
/// raw scan would have read. (The path itself runs against bluetoothd in LiveRadioTests.)
@Suite struct BlueZScannerTests {
    @Test func addressTextBecomesHCIByteOrder() {
        #expect(BlueZScanner.address("C1:C2:C3:C4:C5:C6") == [0xC6, 0xC5, 0xC4, 0xC3, 0xC2, 0xC1])
        #expect(BlueZScanner.address("C1:C2:C3") == nil)
        #expect(BlueZScanner.address("not an address") == nil)
    }

    @Test func manufacturerDataBecomesAReportTheBeaconParserReads() throws {
        let payload: [UInt8] =
            [0x02, 0x15] + [0x8F, 0x0C, 0x1D, 0xDC, 0x11, 0xE5, 0x4A, 0x07, 0x89, 0x10, 0x42, 0x59, 0x41, 0xB0, 0x72, 0xF9]
            + [0x00, 0x01, 0x00, 0x02, 0xC5]
        let event = try #require(
            BlueZScanner.advertisingReportEvent(
                address: [6, 5, 4, 3, 2, 1], randomAddress: true, rssi: -63,
                data: BlueZScanner.advertisingData(
                    manufacturerData: .dictionary([.init(key: .uint16(0x004C), value: .variant(.array(payload.map(DBusValue.byte))))]),
                    serviceData: nil)))
        var sightings: [(BeaconIdentity, Int8, Int8)] = []
        try event.withUnsafeBytes { bytes in
            var reports = try AdvertisingReportIterator(event: bytes)
            while let report = try reports.next() {
                try AdvertisingData.forEachBeaconFrame(in: report.data) { frame in
                    sightings.append((frame.identity, report.rssi, frame.measuredPower))
                }
            }
        }
        try #require(sightings.count == 1)
        #expect(sightings[0].0.major == 1 && sightings[0].0.minor == 2)
        #expect(sightings[0].0.uuid == UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9"))
        #expect(sightings[0].1 == -63)
        #expect(sightings[0].2 == -59)
    }

    @Test func dataTooLongForOneAdvertisementIsDropped() {
        let long = [UInt8](repeating: 0, count: 26)
        let bytes = DBusValue.variant(.array(long.map(DBusValue.byte)))
        let data = BlueZScanner.advertisingData(
            manufacturerData: .dictionary([.init(key: .uint16(1), value: bytes), .init(key: .uint16(2), value: bytes)]),
            serviceData: nil)
        #expect(BlueZScanner.advertisingReportEvent(address: [1, 2, 3, 4, 5, 6], randomAddress: false, rssi: -50, data: data) == nil)
    }

    /// Random private addresses make a new device object every few minutes: a day of them (or a flood of
    /// made-up ones) stays within the limit, and the devices heard lately are the ones kept.
    @Test func rotatingAddressesStayWithinTheLimit() throws {
        var devices = BlueZDevices(limit: 100)
        let resident = "/org/bluez/hci0/dev_C0_00_00_00_00_01"
        devices.learn(address: [1, 0, 0, 0, 0, 0xC0], random: true, rssi: -60, of: resident)
        for index in 0..<5_000 {
            let path = "/org/bluez/hci0/dev_rotating_\(index)"
            devices.learn(address: [UInt8(index & 0xFF), UInt8(index >> 8), 0, 0, 0, 0x40], random: true, rssi: nil, of: path)
            // The resident beacon keeps advertising: an RSSI update without its address.
            if index % 50 == 0 { devices.learn(address: nil, random: false, rssi: -61, of: resident) }
            #expect(devices.count <= 100)
        }
        #expect(devices.count == 100)
        let kept = try #require(devices[resident])
        #expect(kept.address == [1, 0, 0, 0, 0, 0xC0] && kept.randomAddress && kept.rssi == -61)
        #expect(devices["/org/bluez/hci0/dev_rotating_4999"]?.rssi == 127)
        #expect(devices["/org/bluez/hci0/dev_rotating_0"] == nil)
        // An RSSI for an object whose address is not known is not a device yet.
        devices.learn(address: nil, random: false, rssi: -70, of: "/org/bluez/hci0/dev_unknown")
        #expect(devices["/org/bluez/hci0/dev_unknown"] == nil)
    }
}
