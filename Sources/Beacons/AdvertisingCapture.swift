/// What a replay read, for its closing summary. Malformed advertising events are skipped and counted here;
/// they never stop a replay.
public struct CaptureStatistics: Hashable, Sendable {
    /// BTSnoop records read.
    public var records = 0
    /// HCI events among them.
    public var events = 0
    /// LE Advertising Report and LE Extended Advertising Report events.
    public var advertisingEvents = 0
    public var advertisingReports = 0
    public var beaconFrames = 0
    /// Advertising events whose HCI structure is broken (a length past the end, a truncated report): their
    /// reports from the damage on are skipped.
    public var malformedEvents = 0
    /// Reports whose advertising data is broken (an AD length past the end): beacons before the damage are kept.
    /// Counted only by `nextSighting()`, which reads the advertising data.
    public var malformedAdvertisingData = 0

    public init() {}

    /// Advertising events or reports skipped in part or whole because they were malformed.
    public var malformed: Int { malformedEvents + malformedAdvertisingData }
}

/// Streams a BTSnoop capture as advertising reports or beacon sightings, in constant memory and without a heap
/// allocation per report. Pull one at a time; the capture's timestamps are the clock (Unix seconds).
///
/// For a benchmark of decoding alone: `try AdvertisingCapture.countBeaconFrames(path:)` reads the whole file
/// (BTSnoop records, HCI events, AD structures) and returns the statistics; `beaconFrames` is the count.
///
///     let capture = try AdvertisingCapture(path: "scan.btsnoop")
///     while let sighting = try capture.nextSighting() { ranger.add(sighting) }
///     print(capture.statistics.malformed, "malformed advertising events skipped")
///
/// A damaged file throws `BTSnoopError` (with the byte offset) once everything before the damage was returned.
public final class AdvertisingCapture {
    public let reader: BTSnoopReader
    // The state below is touched several times per report. A reader is used by one task at a time and
    // lends no property out across a call, so Swift's run-time exclusivity checks (a tenth of a replay's
    // CPU time) are left out.
    @exclusivity(unchecked) public private(set) var statistics = CaptureStatistics()

    /// Reports of the event being read, and its time.
    @exclusivity(unchecked) private var reports: AdvertisingReportIterator?
    @exclusivity(unchecked) private var eventTime = BTSnoopTimestamp(microseconds: 0)
    /// AD structures of the report being read, and who sent it.
    @exclusivity(unchecked) private var structures: AdvertisingDataIterator?
    @exclusivity(unchecked) private var reportAddress = BluetoothAddress(wire: (0, 0, 0, 0, 0, 0))
    @exclusivity(unchecked) private var reportRSSI: Int8 = 0

    public init(reader: BTSnoopReader) { self.reader = reader }

    public convenience init(path: String) throws(BTSnoopError) { self.init(reader: try BTSnoopReader(path: path)) }

    /// The next advertising report of the capture and the time of its event. The view borrows the reader's
    /// buffer: it is valid until the next call.
    public func nextReport() throws(BTSnoopError) -> (report: AdvertisingReportView, time: BTSnoopTimestamp)? {
        while true {
            if var current = reports {
                do {
                    if let report = try current.next() {
                        reports = current
                        statistics.advertisingReports += 1
                        return (report, eventTime)
                    }
                } catch {
                    statistics.malformedEvents += 1
                }
                reports = nil
            }
            guard let record = try reader.next() else { return nil }
            statistics.records += 1
            guard record.packetType == .event else { continue }
            statistics.events += 1
            do {
                let event = try AdvertisingReportIterator(event: record.packet)
                guard event.format != nil else { continue }
                statistics.advertisingEvents += 1
                reports = event
                eventTime = record.timestamp
            } catch {
                if Self.isAdvertisingEvent(record.packet) {
                    statistics.advertisingEvents += 1
                    statistics.malformedEvents += 1
                }
            }
        }
    }

    /// The next iBeacon or AltBeacon frame heard, with the report's address and RSSI (127: not available) and
    /// the event's time in Unix seconds.
    public func nextSighting() throws(BTSnoopError) -> BeaconSighting? {
        while true {
            if var current = structures {
                do {
                    while let structure = try current.next() {
                        if structure.type == AdvertisingDataType.manufacturerSpecificData,
                            let frame = BeaconFrame(manufacturerData: structure.value)
                        {
                            structures = current
                            statistics.beaconFrames += 1
                            return BeaconSighting(
                                frame: frame, address: reportAddress, rssi: reportRSSI, time: eventTime.unixSeconds)
                        }
                    }
                } catch {
                    statistics.malformedAdvertisingData += 1
                }
                structures = nil
            }
            guard let (report, _) = try nextReport() else { return nil }
            structures = AdvertisingDataIterator(report.data, baseOffset: report.dataOffset)
            reportAddress = report.address
            reportRSSI = report.rssi
        }
    }

    /// Decode-only: reads every record, event, report and AD structure of the file at `path` and returns what
    /// it counted. This is the path `make bench` times.
    public static func countBeaconFrames(path: String) throws(BTSnoopError) -> CaptureStatistics {
        let capture = try AdvertisingCapture(path: path)
        while try capture.nextSighting() != nil {}
        return capture.statistics
    }

    /// An LE Meta event announcing advertising reports, whatever its lengths say.
    private static func isAdvertisingEvent(_ event: UnsafeRawBufferPointer) -> Bool {
        event.count >= 3 && event[0] == HCIEvent.leMetaEventCode
            && (event[2] == HCIEvent.leAdvertisingReportSubevent
                || event[2] == HCIEvent.leExtendedAdvertisingReportSubevent)
    }
}
