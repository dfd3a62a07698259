import Foundation

/// The log-distance path-loss model: what a receiver hears from a transmitter whose RSSI at 1 m is
/// `measuredPower`, `distance` metres away, with path-loss exponent `n` (2 in free space).
package func pathLossRSSI(measuredPower: Int8, distance: Double, exponent n: Double) -> Double {
    Double(measuredPower) - 10 * n * log10(max(distance, 0.01))
}

/// RSSI as a report carries it: whole dBm within the HCI range -127...20.
package func reportedRSSI(_ value: Double) -> Int8 { Int8(min(max(value.rounded(), -127), 20)) }

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
        /// An Eddystone-EID beacon's identifiers (its frame's identity is then replaced as they rotate); on an iBeacon
        /// frame, a secure beacon's iBeacon form (major and minor replaced by each EID's first 4 bytes).
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
    /// A walk's start unless given: a fixed time, so that the same walk writes the same file.
    public static let defaultStart = BTSnoopTimestamp(unixSeconds: 1_700_000_000)
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
        beacons: [Beacon], start: BTSnoopTimestamp = BeaconWalk.defaultStart,
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
