// libFuzzer target: one HCI event (H4-framed or bare) through the advertising report parser.
// Bad input must throw MalformedPacket with an offset inside the packet; reports that parse must be written
// back in their layout and read back the same.
import Beacons

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHCIEvent(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let packet = Array(UnsafeBufferPointer(start: start, count: count))
    let reports: [AdvertisingReport]
    do {
        reports = try HCIEvent.advertisingReports(inPacket: packet)
    } catch {
        precondition(error.offset <= packet.count, "error offset \(error.offset) past a \(packet.count)-byte packet")
        return 0
    }
    // The writer refuses what the one-byte length fields cannot hold; everything else must round-trip.
    guard let format = reports.first?.format,
        let rebuilt = try? HCIEvent.advertisingReportEvent(reports, format: format)
    else { return 0 }
    let again = try? HCIEvent.advertisingReports(inPacket: rebuilt)
    precondition(again == reports, "an advertising report event does not survive being written and read back")
    return 0
}
