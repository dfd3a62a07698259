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
        var sightings: [BeaconSighting] = []
        statistics.records += 1
        statistics.events += 1
        event.withUnsafeBytes { bytes in
            let iterator: AdvertisingReportIterator
            do { iterator = try AdvertisingReportIterator(event: bytes) } catch {
                statistics.malformedEvents += 1
                return
            }
            guard iterator.format != nil else { return }
            var reports = iterator
            statistics.advertisingEvents += 1
            while true {
                let report: AdvertisingReportView?
                do { report = try reports.next() } catch {
                    statistics.malformedEvents += 1
                    return
                }
                guard let report else { return }
                statistics.advertisingReports += 1
                do {
                    try AdvertisingData.forEachBeaconFrame(in: report.data) { frame in
                        statistics.beaconFrames += 1
                        sightings.append(BeaconSighting(frame: frame, address: report.address, rssi: report.rssi, time: time))
                    }
                } catch {
                    statistics.malformedAdvertisingData += 1
                }
            }
        }
        return sightings
    }
}
