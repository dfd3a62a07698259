import Beacons
import BeaconsTesting
import Foundation
import Testing

extension SplitMix64 {
    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }

    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    mutating func address() -> BluetoothAddress {
        BluetoothAddress(wire: (byte(), byte(), byte(), byte(), byte(), byte()))
    }

    mutating func frame() -> BeaconFrame {
        let uuid = UUID(
            uuid: (
                byte(), byte(), byte(), byte(), byte(), byte(), byte(), byte(), byte(), byte(), byte(), byte(), byte(),
                byte(),
                byte(), byte()
            ))
        return BeaconFrame(
            kind: next() % 2 == 0 ? .iBeacon : .altBeacon,
            identity: BeaconIdentity(
                uuid: uuid, major: UInt16(truncatingIfNeeded: next()), minor: UInt16(truncatingIfNeeded: next())),
            measuredPower: Int8(truncatingIfNeeded: next()))
    }

    /// Reports that fit one event of `format`: 1...N of them, some with beacon data, some with random bytes.
    mutating func reports(_ format: AdvertisingReportFormat) -> [AdvertisingReport] {
        let perReport = format == .legacy ? 10 : 24
        let count = int(1...(format == .legacy ? 6 : 10))
        let room = min(31, (253 - count * perReport) / count)
        return (0..<count).map { _ in
            var data = next() % 3 == 0 ? AdvertisingData.beacon(frame(), flags: next() % 2 == 0 ? 0x06 : nil) : []
            if data.count > room { data = [] }
            if data.isEmpty { data = bytes(int(0...room)) }
            switch format {
            case .legacy:
                return AdvertisingReport(
                    format: .legacy, eventType: UInt16(int(0...4)), addressType: UInt8(int(0...3)), address: address(),
                    rssi: Int8(truncatingIfNeeded: next()), data: data)
            case .extended:
                return AdvertisingReport(
                    format: .extended, eventType: UInt16(int(0...0x7F)), addressType: UInt8(int(0...3)),
                    address: address(),
                    rssi: Int8(truncatingIfNeeded: next()), data: data,
                    extended: ExtendedAdvertisingFields(
                        primaryPHY: UInt8(int(1...3)), secondaryPHY: UInt8(int(0...3)),
                        advertisingSID: UInt8(int(0...15)),
                        txPower: Int8(truncatingIfNeeded: next()),
                        periodicAdvertisingInterval: UInt16(truncatingIfNeeded: next()),
                        directAddressType: UInt8(int(0...3)), directAddress: address()))
            }
        }
    }
}

@Suite struct RoundTripTests {
    @Test(arguments: [AdvertisingReportFormat.legacy, .extended])
    func randomEventsParseBackEqual(_ format: AdvertisingReportFormat) throws {
        var random = SplitMix64(seed: format == .legacy ? 11 : 13)
        var multiReportEvents = 0
        for _ in 0..<2_000 {
            let reports = random.reports(format)
            if reports.count > 1 { multiReportEvents += 1 }
            let event = try HCIEvent.advertisingReportEvent(reports, format: format)
            #expect(try HCIEvent.advertisingReports(inPacket: event) == reports)
            #expect(try HCIEvent.advertisingReports(inPacket: [HCIPacketType.event.rawValue] + event) == reports)
        }
        #expect(multiReportEvents > 1_000)
    }

    @Test func randomBeaconFramesParseBackEqual() throws {
        var random = SplitMix64(seed: 17)
        for _ in 0..<2_000 {
            let frames = (0..<random.int(1...3)).map { _ in random.frame() }
            var data: [UInt8] = []
            for frame in frames {
                AdvertisingData.appendBeacon(frame, flags: random.next() % 2 == 0 ? 0x06 : nil, to: &data)
            }
            #expect(try AdvertisingData.beaconFrames(in: data) == frames)
        }
    }

    @Test func iBeaconEncodingIsApplesLayout() {
        let matey = BeaconFrame(
            kind: .iBeacon,
            identity: BeaconIdentity(
                uuid: UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!, major: 1, minor: 2),
            measuredPower: -59)
        let expected = bytes(hex: "0201061aff4c0002158f0c1ddc11e54a078910425941b072f900010002c5")!
        #expect(AdvertisingData.beacon(matey) == expected)
    }

    @Test func altBeaconEncodingIsTheSpecLayout() throws {
        let frame = BeaconFrame(
            kind: .altBeacon,
            identity: BeaconIdentity(
                uuid: UUID(uuidString: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")!, major: 1, minor: 258),
            measuredPower: -65)
        let data = AdvertisingData.beacon(frame, flags: nil)
        #expect(data == bytes(hex: "1bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010102bf00")!)
        #expect(try AdvertisingData.beaconFrames(in: data) == [frame])
    }

    @Test(arguments: [BTSnoopDatalink.hci, .h4, .monitor])
    func capturesOfEveryDatalinkReadBack(_ datalink: BTSnoopDatalink) throws {
        struct Packet: Equatable {
            var type: HCIPacketType
            var direction: HCIDirection
            var bytes: [UInt8]
            var timestamp: BTSnoopTimestamp
        }
        var random = SplitMix64(seed: UInt64(datalink.rawValue))
        let types: [HCIPacketType] =
            datalink == .hci ? [.command, .event, .acl] : [.command, .event, .acl, .sco, .iso]
        var time = BTSnoopTimestamp(unixSeconds: 1_700_000_000)
        let packets = (0..<500).map { _ in
            let type = types[random.int(0...(types.count - 1))]
            let direction: HCIDirection =
                switch type {
                case .command: .hostToController
                case .event: .controllerToHost
                default: random.next() % 2 == 0 ? .hostToController : .controllerToHost
                }
            time.microseconds += Int64(random.int(0...100_000))
            return Packet(type: type, direction: direction, bytes: random.bytes(random.int(0...300)), timestamp: time)
        }
        let file = TemporaryFile()
        let writer = try BTSnoopWriter(path: file.path, datalink: datalink, bufferSize: 4096)
        for packet in packets {
            try writer.write(
                packet.type, packet.bytes, at: packet.timestamp, direction: packet.direction, adapterIndex: 3)
        }
        try writer.close()

        let reader = try BTSnoopReader(path: file.path, bufferSize: 1024)
        #expect(reader.datalink == datalink)
        var read: [Packet] = []
        while let record = try reader.next() {
            let type = try #require(record.packetType)
            read.append(
                Packet(
                    type: type, direction: record.direction, bytes: Array(record.packet), timestamp: record.timestamp))
            #expect(record.adapterIndex == (datalink == .monitor ? 3 : nil))
        }
        #expect(read == packets)
    }

    @Test func timestampsCountFromTheUnixEpoch() {
        let time = BTSnoopTimestamp(unixSeconds: 1_700_000_000.25)
        #expect(time.microseconds == 0x00DC_DDB3_0F2F_8000 + 1_700_000_000_250_000)
        #expect(time.unixSeconds == 1_700_000_000.25)
    }

    /// A capture written by the generator replays to the frames it wrote, in legacy and extended events of
    /// several reports, with the non-beacon adverts giving nothing.
    @Test func bulkCaptureReplaysToItsBeacons() throws {
        let bulk = BulkCapture(reports: 20_000, beacons: 120, seed: 5)
        let file = TemporaryFile()
        let writer = try BTSnoopWriter(path: file.path)
        let summary = try bulk.write(to: writer)
        try writer.close()
        #expect(summary.reports == 20_000)
        #expect(summary.events < summary.reports)

        let capture = try AdvertisingCapture(path: file.path)
        var frames: Set<BeaconFrame> = []
        var formats: Set<AdvertisingReportFormat> = []
        while let sighting = try capture.nextSighting() { frames.insert(sighting.frame) }
        let reports = try AdvertisingCapture(path: file.path)
        var legacyPDUs = 0
        while let (report, _) = try reports.nextReport() {
            formats.insert(report.format)
            if report.isLegacyPDU { legacyPDUs += 1 }
        }
        #expect(capture.statistics.advertisingReports == summary.reports)
        #expect(capture.statistics.advertisingEvents == summary.events)
        #expect(capture.statistics.beaconFrames == summary.beaconReports)
        #expect(capture.statistics.malformed == 0)
        #expect(frames == Set(bulk.beaconFrames()))
        #expect(Set(frames.map(\.kind)) == [.iBeacon, .altBeacon])
        #expect(formats == [.legacy, .extended])
        #expect(legacyPDUs < summary.reports)
        let nonBeaconShare = Double(summary.reports - summary.beaconReports) / Double(summary.reports)
        #expect(abs(nonBeaconShare - 0.1) < 0.02)
    }
}
