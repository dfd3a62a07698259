import Foundation

/// The log-distance path-loss model: what a receiver hears from a transmitter whose RSSI at 1 m is
/// `measuredPower`, `distance` metres away, with path-loss exponent `n` (2 in free space).
func pathLossRSSI(measuredPower: Int8, distance: Double, exponent n: Double) -> Double {
    Double(measuredPower) - 10 * n * log10(max(distance, 0.01))
}

/// RSSI as a report carries it: whole dBm within the HCI range -127...20.
func reportedRSSI(_ value: Double) -> Int8 { Int8(min(max(value.rounded(), -127), 20)) }

/// Beacons whose distance from the receiver changes over time: each advertises every `advertisingInterval`
/// seconds; RSSI follows the log-distance model plus Gaussian noise.
public struct BeaconWalk: Sendable {
    /// Distance in metres at `time` seconds after the start; distance between waypoints is linear.
    public struct Waypoint: Hashable, Sendable {
        public var time: Double
        public var distance: Double

        public init(time: Double, distance: Double) {
            self.time = time
            self.distance = distance
        }
    }

    public struct Beacon: Hashable, Sendable {
        public var frame: BeaconFrame
        public var address: BluetoothAddress
        public var path: [Waypoint]
        /// An Eddystone-EID beacon's identifiers (its frame's identity is then replaced as they rotate).
        public var ephemeralIDs: EphemeralIDSchedule?

        public init(
            frame: BeaconFrame, address: BluetoothAddress, path: [Waypoint], ephemeralIDs: EphemeralIDSchedule? = nil
        ) {
            self.frame = frame
            self.address = address
            self.path = path
            self.ephemeralIDs = ephemeralIDs
        }

        /// Piecewise-linear along `path`; before the first waypoint its distance, after the last its distance.
        public func distance(at time: Double) -> Double {
            guard let first = path.first, let last = path.last else { return 1 }
            if time <= first.time { return first.distance }
            if time >= last.time { return last.distance }
            let after = path.firstIndex { $0.time > time }!
            let from = path[after - 1]
            let to = path[after]
            return from.distance + (to.distance - from.distance) * (time - from.time) / (to.time - from.time)
        }
    }

    public var beacons: [Beacon]
    public var start: BTSnoopTimestamp
    /// Seconds of advertising; by default until the last waypoint of any beacon.
    public var duration: Double
    public var advertisingInterval: Double
    public var pathLossExponent: Double
    /// Standard deviation of the RSSI noise, dB.
    public var rssiNoise: Double
    public var seed: UInt64
    /// TLM interleaved with the Eddystone beacons' frames; nil: none.
    public var telemetry: TelemetrySchedule?

    public init(
        beacons: [Beacon], start: BTSnoopTimestamp = BTSnoopTimestamp(unixSeconds: 1_700_000_000),
        duration: Double? = nil, advertisingInterval: Double = 0.1, pathLossExponent: Double = 2,
        rssiNoise: Double = 4, seed: UInt64 = 1, telemetry: TelemetrySchedule? = nil
    ) {
        self.telemetry = telemetry
        self.beacons = beacons
        self.start = start
        self.duration = duration ?? beacons.compactMap { $0.path.last?.time }.max() ?? 0
        self.advertisingInterval = advertisingInterval
        self.pathLossExponent = pathLossExponent
        self.rssiNoise = rssiNoise
        self.seed = seed
    }

    /// Every advert in time order, with the true distance it was sent from. Beacons advertise in turn, each in
    /// its own slice of the interval, with a little jitter.
    public func forEachAdvert<Failure: Error>(
        _ body: (_ sighting: BeaconSighting, _ distance: Double) throws(Failure) -> Void
    ) throws(Failure) {
        guard !beacons.isEmpty, advertisingInterval > 0 else { return }
        var random = SplitMix64(seed: seed)
        let slot = advertisingInterval / Double(beacons.count)
        var tick = 0
        while Double(tick) * advertisingInterval <= duration {
            for (index, beacon) in beacons.enumerated() {
                let offset = Double(tick) * advertisingInterval + (Double(index) + 0.5 * random.nextUnit()) * slot
                let distance = beacon.distance(at: offset)
                let rssi =
                    pathLossRSSI(
                        measuredPower: beacon.frame.measuredPower, distance: distance, exponent: pathLossExponent)
                    + rssiNoise * random.nextGaussian()
                let time = BTSnoopTimestamp(microseconds: start.microseconds + Int64((offset * 1_000_000).rounded()))
                try body(
                    BeaconSighting(
                        frame: beacon.frame, address: beacon.address, rssi: reportedRSSI(rssi), time: time.unixSeconds),
                    distance)
            }
            tick += 1
        }
    }

    /// The most a walk may write: a walk past it is a typo (a time of 1e300) more likely than a wish.
    public static let maximumBytes = 256 << 20

    /// The size of the file `write` makes (H4 datalink): the BTSnoop header, and per advert a record header,
    /// the packet type and one advertising report event.
    public func estimatedBytes(format: AdvertisingReportFormat = .legacy) -> Double {
        guard let beacon = beacons.first, advertisingInterval > 0 else { return 16 }
        let report = AdvertisingReport(
            format: format, eventType: 0, addressType: 1, address: beacon.address, rssi: -60,
            data: AdvertisingData.beacon(beacon.frame))
        var event: [UInt8] = []
        // Cannot throw: one report of 30 bytes of data fits any advertising report event.
        try! HCIEvent.append([report], format: format, to: &event)
        let adverts = ((duration / advertisingInterval).rounded(.down) + 1) * Double(beacons.count)
        return 16 + adverts * Double(24 + 1 + event.count)
    }

    /// Refuses a walk whose file would pass `maximumBytes`, saying how large it would be.
    public func checkSize(format: AdvertisingReportFormat = .legacy) throws(InvalidBeaconConfiguration) {
        let bytes = estimatedBytes(format: format)
        guard bytes <= Double(Self.maximumBytes) else {
            throw InvalidBeaconConfiguration(
                "this walk would write about \(Self.sizeText(bytes)) (\(String(format: "%.3g", duration / 3600)) hours of adverts), more than "
                    + "the \(Self.maximumBytes >> 20) MB allowed: check its times, or raise the advertising interval")
        }
    }

    /// `2.4 GB`, `1.2e+301 bytes`: three significant digits.
    private static func sizeText(_ bytes: Double) -> String {
        let units = ["bytes", "kB", "MB", "GB", "TB", "PB"]
        var scaled = bytes
        var index = 0
        while scaled >= 1000 && index < units.count - 1 {
            scaled /= 1000
            index += 1
        }
        return scaled >= 1000 ? String(format: "%.3g", bytes) + " bytes" : String(format: "%.3g", scaled) + " " + units[index]
    }

    /// Writes one advertising report event per advert (ADV_NONCONN_IND, legacy PDU) in `format`.
    public func write(to writer: BTSnoopWriter, format: AdvertisingReportFormat = .legacy) throws(BTSnoopError) {
        var event: [UInt8] = []
        // Beacons advertise in turn, so each one's advert count is the round's.
        var adverts = [Int](repeating: 0, count: beacons.count)
        var next = 0
        try forEachAdvert { (sighting, _) throws(BTSnoopError) in
            let index = next
            next = (next + 1) % beacons.count
            adverts[index] += 1
            let data = advertisingData(
                of: beacons[index], advert: adverts[index], elapsed: sighting.time - start.unixSeconds)
            let report = AdvertisingReport(
                format: format, eventType: format == .legacy ? 0x03 : 0x10, addressType: 1, address: sighting.address,
                rssi: sighting.rssi, data: data)
            event.removeAll(keepingCapacity: true)
            // Cannot throw: one report of 30 bytes of data fits any advertising report event.
            try! HCIEvent.append([report], format: format, to: &event)
            try writer.write(
                .event, event, at: BTSnoopTimestamp(unixMicroseconds: Int64((sighting.time * 1_000_000).rounded())))
        }
    }
}

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
