import Foundation
import Testing

@testable import Beacons

/// Options a user sets alone work alone, and a walk's size is checked before it is written.
@Suite struct WalkLimitTests {
    private static let frame = BeaconFrame(
        kind: .iBeacon,
        identity: BeaconIdentity(uuid: UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!, major: 1, minor: 1),
        measuredPower: -59)

    private static func walk(until end: Double) -> BeaconWalk {
        BeaconWalk(beacons: [
            BeaconWalk.Beacon(
                frame: frame, address: BluetoothAddress(wire: (1, 2, 3, 4, 5, 0xC6)),
                path: [.init(time: 0, distance: 1), .init(time: end, distance: 1)])
        ])
    }

    /// `--tracking-age 20` alone: the drop-after time, which no option sets, follows it.
    @Test func aLongTrackingAgeNeedsNoOtherSetting() throws {
        let ranger = try Ranger(configuration: .init(maxTrackingAge: 20))
        #expect(ranger.configuration.dropAfter == 40)
        #expect(try Ranger().configuration.dropAfter == 10, "the default is unchanged")
        #expect(throws: InvalidBeaconConfiguration.self) { try Ranger(configuration: .init(maxTrackingAge: 5, dropAfter: 4)) }
    }

    @Test func theEstimateIsTheSizeWritten() throws {
        let walk = Self.walk(until: 30)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("walk-\(UUID()).btsnoop")
        defer { try? FileManager.default.removeItem(at: file) }
        let writer = try BTSnoopWriter(path: file.path)
        try walk.write(to: writer)
        try writer.close()
        let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int
        #expect(size.map(Double.init) == walk.estimatedBytes())
        try walk.checkSize()
    }

    /// `--walk "U:1:1@0=1,1e300=1"` would have written until the disk was full.
    @Test func aWalkPastTheLimitIsRefusedSayingItsSize() {
        #expect(throws: Never.self) { try Self.walk(until: 3600).checkSize() }
        do {
            try Self.walk(until: 1e300).checkSize()
            Issue.record("a walk of 1e300 s was accepted")
        } catch {
            #expect(error.description.contains("this walk would write about 6.9e+302 bytes"), "\(error)")
        }
        do {
            try Self.walk(until: 200 * 3600).checkSize()
            Issue.record("a walk of 200 h was accepted")
        } catch {
            #expect(error.description.contains("about 497 MB (200 hours of adverts)"), "\(error)")
        }
    }
}
