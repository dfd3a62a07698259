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

    /// The event being read, and its time.
    @exclusivity(unchecked) private var event = EventSightings()
    @exclusivity(unchecked) private var eventTime = BTSnoopTimestamp(microseconds: 0)

    public init(reader: BTSnoopReader) { self.reader = reader }

    public convenience init(path: String) throws(BTSnoopError) { self.init(reader: try BTSnoopReader(path: path)) }

    /// The next advertising report of the capture and the time of its event. The view borrows the reader's
    /// buffer: it is valid until the next call.
    public func nextReport() throws(BTSnoopError) -> (report: AdvertisingReportView, time: BTSnoopTimestamp)? {
        while true {
            if let report = event.nextReport(counting: &statistics) { return (report, eventTime) }
            guard try startNextEvent() else { return nil }
        }
    }

    /// The next iBeacon or AltBeacon frame heard, with the report's address and RSSI (127: not available) and
    /// the event's time in Unix seconds.
    public func nextSighting() throws(BTSnoopError) -> BeaconSighting? {
        while true {
            if let sighting = event.next(counting: &statistics) { return sighting }
            guard try startNextEvent() else { return nil }
        }
    }

    /// Reads records up to the next HCI event and starts reading it; false at the end of the file.
    private func startNextEvent() throws(BTSnoopError) -> Bool {
        while let record = try reader.next() {
            statistics.records += 1
            guard record.packetType == .event else { continue }
            event = EventSightings(event: record.packet, time: record.timestamp.unixSeconds, counting: &statistics)
            eventTime = record.timestamp
            return true
        }
        return false
    }

    /// Decode-only: reads every record, event, report and AD structure of the file at `path` and returns what
    /// it counted. This is the path `make bench` times.
    public static func countBeaconFrames(path: String) throws(BTSnoopError) -> CaptureStatistics {
        let capture = try AdvertisingCapture(path: path)
        while try capture.nextSighting() != nil {}
        return capture.statistics
    }
}
