import Beacons
import Foundation
import Testing

/// Parses every report of `packet` and the AD structures of each, as a replay would.
private func parseFully(_ packet: [UInt8]) throws {
    for report in try HCIEvent.advertisingReports(inPacket: packet) {
        _ = try AdvertisingData.beaconFrames(in: report.data)
    }
}

private let beaconReport = AdvertisingReport(
    format: .legacy, eventType: 3, addressType: 1, address: BluetoothAddress(wire: (1, 2, 3, 4, 5, 6)), rssi: -60,
    data: AdvertisingData.beacon(
        BeaconFrame(
            kind: .iBeacon,
            identity: BeaconIdentity(
                uuid: UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!, major: 1, minor: 2),
            measuredPower: -59)))

@Suite struct MalformedInputTests {
    /// Every prefix of a valid event is truncated: the parameter length no longer matches, a typed error.
    @Test(arguments: [AdvertisingReportFormat.legacy, .extended])
    func everyTruncationIsATypedError(_ format: AdvertisingReportFormat) throws {
        var report = beaconReport
        report.format = format
        let event = try HCIEvent.advertisingReportEvent([report, report, report], format: format)
        for cut in 0..<event.count {
            #expect(throws: MalformedPacket.self) { try parseFully(Array(event.prefix(cut))) }
        }
        try parseFully(event)
    }

    /// The header agrees with the bytes, but a report's data length points past the end: the reports before it
    /// are returned, then the error names the length field.
    @Test(arguments: [AdvertisingReportFormat.legacy, .extended])
    func reportLengthPastTheEnd(_ format: AdvertisingReportFormat) throws {
        var report = beaconReport
        report.format = format
        var event = try HCIEvent.advertisingReportEvent([report, report], format: format)
        let perReport = (format == .legacy ? 10 : 24) + report.data.count
        let secondLength = 4 + perReport + (format == .legacy ? 8 : 23)
        event[secondLength] = 0xF0
        var delivered: [AdvertisingReport] = []
        let error = try event.withUnsafeBytes { bytes in
            var reports = try AdvertisingReportIterator(event: bytes)
            return #expect(throws: MalformedPacket.self) {
                while let view = try reports.next() { delivered.append(AdvertisingReport(view)) }
            }
        }
        #expect(delivered == [report])
        #expect(error == MalformedPacket(.truncated, offset: secondLength))
    }

    @Test func numberOfReportsBeyondTheBytes() throws {
        var event = try HCIEvent.advertisingReportEvent([beaconReport], format: .legacy)
        event[3] = 2
        #expect(throws: MalformedPacket(.truncated, offset: event.count)) { try parseFully(event) }
    }

    @Test func parameterLengthMismatchNamesTheLengthByte() throws {
        let event = try HCIEvent.advertisingReportEvent([beaconReport], format: .legacy)
        #expect(
            throws: MalformedPacket(
                .parameterLengthMismatch(declared: Int(event[1]), actual: event.count - 3), offset: 2)
        ) {
            try parseFully([HCIPacketType.event.rawValue] + event.dropLast())
        }
        #expect(throws: MalformedPacket(.empty, offset: 0)) { try parseFully([]) }
    }

    /// The AD structure after the beacon claims more bytes than there are: the beacon is delivered, then the error.
    @Test func advertisingDataLengthPastTheEnd() throws {
        let data = beaconReport.data + [0x09, 0x09, 0x41]
        var frames: [BeaconFrame] = []
        let error = data.withUnsafeBytes { bytes in
            #expect(throws: MalformedPacket.self) {
                try AdvertisingData.forEachBeaconFrame(in: bytes) { frames.append($0) }
            }
        }
        #expect(frames.count == 1)
        #expect(
            error
                == MalformedPacket(
                    .advertisingDataLengthPastEnd(length: 9, available: 2), offset: beaconReport.data.count))
    }

    @Test func zeroLengthEndsTheSignificantPart() throws {
        let data = [0x00] + beaconReport.data
        #expect(try AdvertisingData.beaconFrames(in: data).isEmpty)
        #expect(try AdvertisingData.beaconFrames(in: beaconReport.data + [0, 0xFF, 0xFF]).count == 1)
    }

    @Test func otherEventsHaveNoReports() throws {
        // Command Complete for HCI_Reset, and an LE Connection Complete.
        #expect(try HCIEvent.advertisingReports(inPacket: [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]).isEmpty)
        #expect(try HCIEvent.advertisingReports(inPacket: [0x3E, 0x02, 0x01, 0x00]).isEmpty)
    }

    /// Random bytes, and random damage to valid events: every outcome is a value or a typed error.
    @Test func randomBytesNeverCrash() {
        var random = SplitMix64(seed: 23)
        var errors = 0
        for round in 0..<20_000 {
            var packet: [UInt8]
            if round % 2 == 0 {
                packet = random.bytes(random.int(0...64))
                if packet.count > 3 {
                    packet[0] = 0x04
                    packet[1] = 0x3E
                    packet[2] = UInt8(packet.count - 3)
                    packet[3] = random.next() % 2 == 0 ? 0x02 : 0x0D
                }
            } else {
                let format: AdvertisingReportFormat = random.next() % 2 == 0 ? .legacy : .extended
                packet = (try? HCIEvent.advertisingReportEvent(random.reports(format), format: format)) ?? []
                for _ in 0..<random.int(1...3) where !packet.isEmpty {
                    packet[random.int(0...(packet.count - 1))] = random.byte()
                }
            }
            do {
                try parseFully(packet)
            } catch {
                errors += 1
            }
        }
        #expect(errors > 1_000)
    }
}

@Suite struct MalformedCaptureTests {
    private func write(_ events: [[UInt8]], to path: String, datalink: BTSnoopDatalink = .h4) throws {
        let writer = try BTSnoopWriter(path: path, datalink: datalink)
        for (index, event) in events.enumerated() {
            try writer.write(.event, event, at: BTSnoopTimestamp(unixMicroseconds: Int64(index) * 100_000))
        }
        try writer.close()
    }

    private func contents(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    private func replace(_ path: String, with bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func garbageHeadersAreTypedErrors() throws {
        let file = TemporaryFile()
        let cases: [([UInt8], BTSnoopError)] = [
            ([], BTSnoopError(.truncatedHeader, offset: 0)),
            (Array("btsno".utf8), BTSnoopError(.truncatedHeader, offset: 0)),
            (Array("btsnoop\0\0\0\0\u{1}\0\0".utf8), BTSnoopError(.truncatedHeader, offset: 0)),
            (Array("GIF89a, not a capture".utf8), BTSnoopError(.notBTSnoop, offset: 0)),
            (
                Array("btsnoop\0".utf8) + [0, 0, 0, 2, 0, 0, 0x03, 0xEA],
                BTSnoopError(.unsupportedVersion(2), offset: 8)
            ),
            (
                Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0x03, 0xE9 + 7],
                BTSnoopError(.unsupportedDatalink(1008), offset: 12)
            ),
        ]
        for (bytes, expected) in cases {
            try replace(file.path, with: bytes)
            #expect(throws: expected) { _ = try BTSnoopReader(path: file.path) }
        }
        #expect(throws: BTSnoopError.self) { _ = try BTSnoopReader(path: file.path + ".missing") }
    }

    /// A file cut anywhere inside a record: every event before it is delivered, then the error names the
    /// record's first byte.
    @Test func truncatedRecordDeliversEverythingBefore() throws {
        let events = try (0..<40).map { index in
            var report = beaconReport
            report.rssi = Int8(-index)
            return try HCIEvent.advertisingReportEvent([report], format: .legacy)
        }
        let file = TemporaryFile()
        try write(events, to: file.path)
        let whole = try contents(file.path)
        let recordLength = 24 + 1 + events[0].count
        for cut in [16 + 30 * recordLength + 1, 16 + 30 * recordLength + 23, 16 + 31 * recordLength - 1] {
            try replace(file.path, with: Array(whole.prefix(cut)))
            let capture = try AdvertisingCapture(reader: BTSnoopReader(path: file.path, bufferSize: 512))
            var rssis: [Int8] = []
            let error = #expect(throws: BTSnoopError.self) {
                while let sighting = try capture.nextSighting() { rssis.append(sighting.rssi) }
            }
            #expect(rssis == (0..<30).map { Int8(-$0) })
            #expect(error?.offset == 16 + 30 * recordLength)
            #expect(throws: error!) { _ = try capture.nextSighting() }
        }
    }

    @Test func absurdRecordLengthIsCorruption() throws {
        let file = TemporaryFile()
        try write([try HCIEvent.advertisingReportEvent([beaconReport], format: .legacy)], to: file.path)
        var bytes = try contents(file.path)
        let second = bytes.count
        bytes += bytes[16...]
        bytes[second + 4] = 0x7F  // included length 0x7F......
        try replace(file.path, with: bytes)
        let capture = try AdvertisingCapture(path: file.path)
        #expect(try capture.nextSighting() != nil)
        #expect(throws: BTSnoopError.self) { _ = try capture.nextSighting() }
        do {
            _ = try capture.nextSighting()
        } catch {
            #expect(error.offset == second)
            guard case .recordTooLarge = error.reason else {
                Issue.record("not recordTooLarge: \(error)")
                return
            }
        }
    }

    /// Malformed advertising events inside a readable capture are skipped and counted; the replay goes on.
    @Test func malformedEventsAreCountedNotFatal() throws {
        let good = try HCIEvent.advertisingReportEvent([beaconReport], format: .legacy)
        var badLength = good
        badLength[12] = 0xF0  // data length past the end
        var badData = good
        badData[13] = 0x7F  // first AD structure length past the end
        var shortHeader = good
        shortHeader[1] = 0x02  // parameter length disagrees with the record
        let file = TemporaryFile()
        try write([good, badLength, good, badData, shortHeader, good], to: file.path)
        let capture = try AdvertisingCapture(path: file.path)
        var count = 0
        while try capture.nextSighting() != nil { count += 1 }
        #expect(count == 3)
        #expect(capture.statistics.malformedEvents == 2)
        #expect(capture.statistics.malformedAdvertisingData == 1)
        #expect(capture.statistics.advertisingEvents == 6)
    }

    /// The HCI datalink says "event" in the flags, the monitor one in its opcode; commands are skipped.
    @Test(arguments: [BTSnoopDatalink.hci, .h4, .monitor])
    func eventsAreFoundInEveryDatalink(_ datalink: BTSnoopDatalink) throws {
        let event = try HCIEvent.advertisingReportEvent([beaconReport], format: .legacy)
        let file = TemporaryFile()
        let writer = try BTSnoopWriter(path: file.path, datalink: datalink)
        let time = BTSnoopTimestamp(unixSeconds: 1_700_000_000)
        try writer.write(.command, Array(event.dropFirst(2)), at: time)  // parameters that look like a report
        try writer.write(.acl, event, at: time)
        try writer.write(.event, event, at: time)
        try writer.close()
        let capture = try AdvertisingCapture(path: file.path)
        let sighting = try #require(try capture.nextSighting())
        #expect(
            sighting.identity
                == BeaconIdentity(uuid: UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!, major: 1, minor: 2))
        #expect(sighting.time == 1_700_000_000)
        #expect(sighting.rssi == -60)
        #expect(try capture.nextSighting() == nil)
        #expect(capture.statistics.records == 3)
        #expect(capture.statistics.events == 1)
    }
}
