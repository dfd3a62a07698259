import Beacons
import Foundation

/// A large capture for benchmarks and soak tests: `reports` advertising reports from a few hundred beacons with
/// noisy RSSI, a share of adverts that are not beacons (some of them Apple data that is not an iBeacon, some
/// cut short), in legacy and extended events of one to several reports.
public struct BulkCapture: Sendable {
    public struct Summary: Hashable, Sendable {
        public var events = 0
        public var reports = 0
        /// Reports that carry a beacon frame (each carries one).
        public var beaconReports = 0
    }

    public var reports: Int
    public var beacons: Int
    public var nonBeaconFraction: Double
    /// Share of events that are LE Extended Advertising Reports; half of their reports carry extended PDUs.
    public var extendedFraction: Double
    public var maximumReportsPerEvent: Int
    public var start: BTSnoopTimestamp
    /// Each beacon's advertising interval, which sets the capture's time span.
    public var advertisingInterval: Double
    public var seed: UInt64
    /// Share of the beacons that are Eddystone (UID, one in four EID), each sending TLM in place of every fifth
    /// advert; 0 writes the same capture as before Eddystone was known.
    public var eddystoneFraction: Double

    public init(
        reports: Int = 1_000_000, beacons: Int = 300, nonBeaconFraction: Double = 0.1, extendedFraction: Double = 0.3,
        maximumReportsPerEvent: Int = 4, start: BTSnoopTimestamp = BTSnoopTimestamp(unixSeconds: 1_700_000_000),
        advertisingInterval: Double = 0.1, seed: UInt64 = 1, eddystoneFraction: Double = 0
    ) {
        self.eddystoneFraction = eddystoneFraction
        self.reports = reports
        self.beacons = beacons
        self.nonBeaconFraction = nonBeaconFraction
        self.extendedFraction = extendedFraction
        self.maximumReportsPerEvent = maximumReportsPerEvent
        self.start = start
        self.advertisingInterval = advertisingInterval
        self.seed = seed
    }

    /// The beacons advertised, derived from the seed: a few proximity UUIDs (one per fifty beacons), unique
    /// identities, every tenth an AltBeacon.
    public func beaconFrames() -> [BeaconFrame] {
        var random = SplitMix64(seed: seed ^ 0xB1C0_FFEE)
        let uuids = (0..<max(1, beacons / 50)).map { _ in
            UUID(
                uuid: (
                    random.nextByte(), random.nextByte(), random.nextByte(), random.nextByte(), random.nextByte(),
                    random.nextByte(), random.nextByte(), random.nextByte(), random.nextByte(), random.nextByte(),
                    random.nextByte(), random.nextByte(), random.nextByte(), random.nextByte(), random.nextByte(),
                    random.nextByte()
                ))
        }
        var seen: Set<BeaconIdentity> = []
        var frames: [BeaconFrame] = []
        while frames.count < beacons {
            let identity = BeaconIdentity(
                uuid: uuids[Int(random.next() % UInt64(uuids.count))], major: UInt16(1 + random.next() % 20),
                minor: UInt16(truncatingIfNeeded: random.next()))
            guard seen.insert(identity).inserted else { continue }
            let power = Int8(-65 + Int(random.next() % 12))
            frames.append(
                BeaconFrame(
                    kind: frames.count % 10 == 9 ? .altBeacon : .iBeacon, identity: identity, measuredPower: power))
        }
        let eddystoneBeacons = Int((Double(frames.count) * eddystoneFraction).rounded())
        for index in 0..<eddystoneBeacons { frames[index] = Self.eddystone(frames[index], index: index) }
        return frames
    }

    /// The Eddystone beacon standing in for `frame`: a UID of its UUID's first 10 bytes and its numbers, or (one
    /// in four) an EID of the same bytes.
    static func eddystone(_ frame: BeaconFrame, index: Int) -> BeaconFrame {
        let bytes = withUnsafeBytes(of: frame.identity.uuid.uuid) { Array($0) }
        let numbers = [UInt8(frame.identity.major >> 8), UInt8(truncatingIfNeeded: frame.identity.major),
                       UInt8(frame.identity.minor >> 8), UInt8(truncatingIfNeeded: frame.identity.minor)]
        if index % 4 == 3 {
            let eid = EphemeralID(bytes: Array(bytes.prefix(4)) + numbers)!
            return BeaconFrame(
                kind: .eddystoneEID, identity: BeaconIdentity(ephemeralID: eid), measuredPower: frame.measuredPower)
        }
        let namespace = EddystoneNamespace(bytes: Array(bytes.prefix(10)))!
        let uid = EddystoneUID(namespace: namespace, instance: numbers + [0, 0])
        return BeaconFrame(
            kind: .eddystoneUID, identity: BeaconIdentity(eddystoneUID: uid), measuredPower: frame.measuredPower)
    }

    /// Writes the capture event by event; memory stays constant whatever `reports` is.
    @discardableResult
    public func write(to writer: BTSnoopWriter) throws(BTSnoopError) -> Summary {
        var random = SplitMix64(seed: seed)
        let frames = beaconFrames()
        let beaconData = frames.map { AdvertisingData.beacon($0) }
        let telemetryData = frames.map { frame in
            AdvertisingData.eddystone(
                .telemetry(
                    TelemetryFrame(
                        batteryMillivolts: 2900 + UInt16(frame.identity.minor % 200), temperatureBits: 0x1580,
                        advertisingCount: UInt32(frame.identity.minor), uptimeTenths: 36_000)))
        }
        var adverts = [Int](repeating: 0, count: frames.count)
        let addresses = frames.map { _ in random.nextAddress() }
        let distances = frames.map { _ in 0.3 + 15 * random.nextUnit() }
        let otherData = (0..<64).map { Self.nonBeaconData(variant: $0, random: &random) }
        let reportInterval = advertisingInterval / Double(max(beacons, 1))

        var summary = Summary()
        var batch: [AdvertisingReport] = []
        var event: [UInt8] = []
        var elapsed = 0.0
        while summary.reports < reports {
            let format: AdvertisingReportFormat = random.nextUnit() < extendedFraction ? .extended : .legacy
            let wanted = min(
                1 + Int(random.next() % UInt64(max(maximumReportsPerEvent, 1))), reports - summary.reports,
                format == .legacy ? 0x19 : 0x0A)
            var parameters = 2
            var beaconReports = 0
            batch.removeAll(keepingCapacity: true)
            while batch.count < wanted {
                var report: AdvertisingReport
                let isBeacon = !frames.isEmpty && random.nextUnit() >= nonBeaconFraction
                if !isBeacon {
                    report = AdvertisingReport(
                        format: format, eventType: 0, addressType: 1, address: random.nextAddress(),
                        rssi: reportedRSSI(-90 + 30 * random.nextUnit()), data: otherData[Int(random.next() % 64)])
                } else {
                    let index = Int(random.next() % UInt64(frames.count))
                    let rssi =
                        pathLossRSSI(
                            measuredPower: frames[index].measuredPower, distance: distances[index], exponent: 2)
                        + 4 * random.nextGaussian()
                    adverts[index] += 1
                    let isTelemetry = frames[index].kind.isEddystone && adverts[index] % 5 == 0
                    report = AdvertisingReport(
                        format: format, eventType: 0, addressType: 1, address: addresses[index],
                        rssi: reportedRSSI(rssi),
                        data: isTelemetry ? telemetryData[index] : beaconData[index])
                }
                switch format {
                case .legacy:
                    report.eventType = UInt16(random.next() % 5)  // ADV_IND ... SCAN_RSP
                case .extended where random.next() % 2 == 0:
                    report.eventType = 0x10  // legacy PDU, ADV_NONCONN_IND
                case .extended:
                    report.eventType = 0x00  // extended PDU, non-connectable, complete
                    report.extended.secondaryPHY = 0x01
                    report.extended.advertisingSID = UInt8(random.next() % 16)
                }
                let size = (format == .legacy ? 10 : 24) + report.data.count
                if !batch.isEmpty, parameters + size > 0xFF { break }
                parameters += size
                batch.append(report)
                if isBeacon { beaconReports += 1 }
            }
            event.removeAll(keepingCapacity: true)
            // Cannot throw: the batch was sized to the event's limits above.
            try! HCIEvent.append(batch, format: format, to: &event)
            elapsed += reportInterval * Double(batch.count)
            try writer.write(
                .event, event, at: BTSnoopTimestamp(microseconds: start.microseconds + Int64(elapsed * 1_000_000)))
            summary.events += 1
            summary.reports += batch.count
            summary.beaconReports += beaconReports
        }
        return summary
    }

    /// Advertising data that holds no beacon: Apple data of other types, a cut-short iBeacon, other companies'
    /// data, names and service lists.
    static func nonBeaconData(variant: Int, random: inout SplitMix64) -> [UInt8] {
        var data: [UInt8] = [2, AdvertisingDataType.flags, 0x1A]
        let filler = (0..<24).map { _ in random.nextByte() }
        switch variant % 4 {
        case 0:  // Apple "nearby" data
            try? AdvertisingData.appendStructure(
                type: AdvertisingDataType.manufacturerSpecificData, value: [0x4C, 0x00, 0x10, 0x05] + filler.prefix(5),
                to: &data)
        case 1:  // iBeacon prefix, too short to be one
            try? AdvertisingData.appendStructure(
                type: AdvertisingDataType.manufacturerSpecificData,
                value: [0x4C, 0x00, 0x02, 0x15] + filler.prefix(12), to: &data)
        case 2:  // another company
            try? AdvertisingData.appendStructure(
                type: AdvertisingDataType.manufacturerSpecificData,
                value: [0x59, 0x00] + filler.prefix(1 + variant % 20), to: &data)
        default:  // a name and a 16-bit service UUID
            try? AdvertisingData.appendStructure(
                type: AdvertisingDataType.completeLocalName, value: Array("sensor-\(variant)".utf8), to: &data)
            try? AdvertisingData.appendStructure(type: 0x03, value: [0x0F, 0x18], to: &data)
        }
        return data
    }
}
