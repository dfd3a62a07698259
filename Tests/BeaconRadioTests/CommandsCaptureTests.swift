import BeaconRadio
import Beacons
import Foundation
import Testing

@Suite struct CommandsCaptureTests {
    /// The capture holds the start commands, the report a scanner 1 m away hears, and the stop command, in
    /// that order on the timeline; a replay of it hears exactly the advertised beacon at its measured power.
    @Test func theCaptureReplaysAsTheAdvertisedBeacon() throws {
        let frame = BeaconFrame(
            kind: .iBeacon,
            identity: BeaconIdentity(uuid: UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!, major: 1, minor: 2),
            measuredPower: -61)
        let advertisement = try BeaconAdvertisement(frame: frame, intervalMilliseconds: 200)
        let commands = try LEAdvertisingCommands(extended: false, advertisement: advertisement)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("advertise-\(UUID()).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: file) }
        try commands.writeCapture(of: advertisement, duration: 5, to: file, at: 1_800_000_000)

        let reader = try BTSnoopReader(path: file)
        var records: [(HCIPacketType?, Double)] = []
        while let record = try reader.next() { records.append((record.packetType, record.timestamp.unixSeconds)) }
        #expect(records.map(\.0) == [.command, .command, .command, .event, .command])
        #expect(records.map(\.1) == records.map(\.1).sorted())
        #expect(abs(records[3].1 - 1_800_000_000.202) < 1e-6 && abs(records[4].1 - 1_800_000_005.002) < 1e-6)

        let capture = try AdvertisingCapture(path: file)
        let sighting = try #require(try capture.nextSighting())
        #expect(sighting.frame == frame && sighting.rssi == -61)
        #expect(try capture.nextSighting() == nil)
    }
}
