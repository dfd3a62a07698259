extension HCIEvent {
    /// The beacon frames one bare HCI event from a radio carries, each with its report's address and RSSI,
    /// at `time`. A live scan keeps going past damage: a malformed event or report gives the frames before it.
    public static func beaconSightings(inEvent event: [UInt8], at time: Double) -> [BeaconSighting] {
        var sightings: [BeaconSighting] = []
        event.withUnsafeBytes { bytes in
            guard var reports = try? AdvertisingReportIterator(event: bytes) else { return }
            while let report = try? reports.next() {
                try? AdvertisingData.forEachBeaconFrame(in: report.data) { frame in
                    sightings.append(BeaconSighting(frame: frame, address: report.address, rssi: report.rssi, time: time))
                }
            }
        }
        return sightings
    }
}
