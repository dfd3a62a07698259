import Beacons
import Foundation
import Testing

@Suite struct EventSightingsTests {
    let beacon = BeaconFrame(
        kind: .iBeacon,
        identity: BeaconIdentity(uuid: UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!, major: 1, minor: 2),
        measuredPower: -59)

    func report(_ data: [UInt8], address: UInt8, rssi: Int8) -> AdvertisingReport {
        AdvertisingReport(
            format: .legacy, eventType: 3, addressType: 1, address: BluetoothAddress(wire: (address, 2, 3, 4, 5, 6)),
            rssi: rssi, data: data)
    }

    @Test(arguments: [AdvertisingReportFormat.legacy, .extended])
    func everyReportsFramesWithItsAddressRSSIAndTheEventsTime(_ format: AdvertisingReportFormat) throws {
        var reports = [
            report(AdvertisingData.beacon(beacon), address: 1, rssi: -60),
            report([0x02, 0x01, 0x06], address: 2, rssi: -70),  // flags only: no beacon
            report(AdvertisingData.beacon(beacon), address: 3, rssi: -80),
        ]
        for index in reports.indices { reports[index].format = format }
        let event = try HCIEvent.advertisingReportEvent(reports, format: format)
        let sightings = HCIEvent.beaconSightings(inEvent: event, at: 12.5)
        #expect(sightings.map(\.rssi) == [-60, -80])
        #expect(sightings.map(\.address.description) == [reports[0].address.description, reports[2].address.description])
        #expect(sightings.allSatisfy { $0.frame == beacon && $0.time == 12.5 })
    }

    @Test func damageGivesTheFramesBeforeItAndOtherEventsNone() throws {
        let good = report(AdvertisingData.beacon(beacon), address: 1, rssi: -60)
        var event = try HCIEvent.advertisingReportEvent([good, good], format: .legacy)
        // Claim a third report that is not there: the two before it still count.
        event[3] = 3
        #expect(HCIEvent.beaconSightings(inEvent: event, at: 0).count == 2)
        // A parameter length that does not match, and a Command Complete event: nothing, and no crash.
        #expect(HCIEvent.beaconSightings(inEvent: Array(event.dropLast()), at: 0).isEmpty)
        #expect(HCIEvent.beaconSightings(inEvent: [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00], at: 0).isEmpty)
        #expect(HCIEvent.beaconSightings(inEvent: [], at: 0).isEmpty)
    }

    /// A live scan and a replay of the same events find the same sightings and count them alike: a malformed
    /// advertising event is an advertising event and malformed, a malformed event of another kind is neither.
    @Test func aLiveScanCountsAsAReplayOfTheSameEvents() throws {
        let good = try HCIEvent.advertisingReportEvent(
            [report(AdvertisingData.beacon(beacon), address: 1, rssi: -60)], format: .legacy)
        var shortHeader = good
        shortHeader[1] = 0x02  // parameter length disagrees with the bytes
        var damagedData = good
        damagedData[13] = 0x7F  // the first AD structure runs past the data
        let events = [
            good, shortHeader, [0x0E, 0x05, 0x01, 0x0C, 0x20, 0x00],  // Command Complete, one byte short
            [0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00], damagedData, good,
        ]
        let file = TemporaryFile()
        let writer = try BTSnoopWriter(path: file.path)
        for (index, event) in events.enumerated() {
            try writer.write(.event, event, at: BTSnoopTimestamp(unixSeconds: Double(index)))
        }
        try writer.close()
        let capture = try AdvertisingCapture(path: file.path)
        var replayed: [BeaconSighting] = []
        while let sighting = try capture.nextSighting() { replayed.append(sighting) }

        var live = CaptureStatistics()
        let heard = events.enumerated().flatMap { index, event in
            HCIEvent.beaconSightings(inEvent: event, at: Double(index), counting: &live)
        }
        #expect(heard == replayed)
        #expect(heard.map(\.time) == [0, 5])
        #expect(live == capture.statistics)
        #expect((live.advertisingEvents, live.malformedEvents, live.malformedAdvertisingData) == (4, 1, 1))
    }
}
