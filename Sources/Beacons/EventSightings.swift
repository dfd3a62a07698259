/// The beacon sightings of one bare HCI event, one at a time, counted into `CaptureStatistics`: the one decoder
/// behind a replay (`AdvertisingCapture`) and a live scan (`HCIEvent.beaconSightings`), so both read and count
/// alike. It borrows the event's bytes and keeps going past damage: a malformed event or report gives the
/// sightings before it, a malformed AD structure the beacons of its report before it.
struct EventSightings {
    private var reports: AdvertisingReportIterator
    /// The AD structures of the report being read, and who sent it.
    private var structures = AdvertisingDataIterator(UnsafeRawBufferPointer(start: nil, count: 0))
    private var address = BluetoothAddress(wire: (0, 0, 0, 0, 0, 0))
    private var rssi: Int8 = 0
    /// The event's time, every sighting's.
    private let time: Double

    /// No event: no sightings.
    init() {
        reports = AdvertisingReportIterator()
        time = 0
    }

    /// Counts the event, and whether it is an advertising event (a malformed one counts as one too).
    @inline(__always)
    init(event: UnsafeRawBufferPointer, time: Double, counting statistics: inout CaptureStatistics) {
        self.time = time
        statistics.events += 1
        do {
            reports = try AdvertisingReportIterator(event: event)
            if reports.format != nil { statistics.advertisingEvents += 1 }
        } catch {
            reports = AdvertisingReportIterator()
            if Self.isAdvertisingEvent(event) {
                statistics.advertisingEvents += 1
                statistics.malformedEvents += 1
            }
        }
    }

    /// The event's next advertising report; its AD structures are left unread.
    @inline(__always)
    mutating func nextReport(counting statistics: inout CaptureStatistics) -> AdvertisingReportView? {
        do throws(MalformedPacket) {
            guard let report = try reports.next() else { return nil }
            statistics.advertisingReports += 1
            return report
        } catch {
            statistics.malformedEvents += 1
            return nil
        }
    }

    /// The next iBeacon, AltBeacon or Eddystone frame of the event (not Eddystone-URL, which names no beacon), with
    /// its report's address and RSSI (127: not available). A TLM frame's sighting carries its telemetry.
    @inline(__always)
    mutating func next(counting statistics: inout CaptureStatistics) -> BeaconSighting? {
        while true {
            do throws(MalformedPacket) {
                while let frame = try structures.nextFrame() {
                    switch frame {
                    case .beacon(let frame):
                        statistics.beaconFrames += 1
                        return BeaconSighting(frame: frame, address: address, rssi: rssi, time: time)
                    case .eddystone(let eddystone):
                        guard let frame = BeaconFrame(eddystone: eddystone) else { continue }
                        statistics.beaconFrames += 1
                        return BeaconSighting(
                            frame: frame, address: address, rssi: rssi, time: time, telemetry: eddystone.telemetry)
                    }
                }
            } catch {
                statistics.malformedAdvertisingData += 1
            }
            guard let report = nextReport(counting: &statistics) else { return nil }
            structures = AdvertisingDataIterator(report.data, baseOffset: report.dataOffset)
            address = report.address
            rssi = report.rssi
        }
    }

    /// An LE Meta event announcing advertising reports, whatever its lengths say.
    private static func isAdvertisingEvent(_ event: UnsafeRawBufferPointer) -> Bool {
        event.count >= 3 && event[0] == HCIEvent.leMetaEventCode
            && (event[2] == HCIEvent.leAdvertisingReportSubevent
                || event[2] == HCIEvent.leExtendedAdvertisingReportSubevent)
    }
}

extension HCIEvent {
    /// The beacon frames one bare HCI event from a radio carries, each with its report's address and RSSI,
    /// at `time`. A live scan keeps going past damage: a malformed event or report gives the frames before it.
    public static func beaconSightings(inEvent event: [UInt8], at time: Double) -> [BeaconSighting] {
        var ignored = CaptureStatistics()
        return beaconSightings(inEvent: event, at: time, counting: &ignored)
    }

    /// The same, counted into `statistics` as a capture's records are (a live scan's closing summary).
    public static func beaconSightings(
        inEvent event: [UInt8], at time: Double, counting statistics: inout CaptureStatistics
    ) -> [BeaconSighting] {
        statistics.records += 1
        return event.withUnsafeBytes { bytes in
            var decoder = EventSightings(event: bytes, time: time, counting: &statistics)
            var sightings: [BeaconSighting] = []
            while let sighting = decoder.next(counting: &statistics) { sightings.append(sighting) }
            return sightings
        }
    }
}
