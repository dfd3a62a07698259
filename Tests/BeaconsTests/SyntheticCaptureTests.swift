import Beacons
import BeaconsTesting
import Foundation
import Testing

private let walkUUID = UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!

private func walkingBeacon(minor: UInt16, path: [BeaconWalk.Waypoint]) -> BeaconWalk.Beacon {
    BeaconWalk.Beacon(
        frame: BeaconFrame(
            kind: .iBeacon, identity: BeaconIdentity(uuid: walkUUID, major: 1, minor: minor), measuredPower: -59),
        address: BluetoothAddress(wire: (UInt8(minor), 0x22, 0x33, 0x44, 0x55, 0xC6)), path: path)
}

@Suite struct SyntheticCaptureTests {
    @Test func distanceIsPiecewiseLinear() {
        let beacon = walkingBeacon(
            minor: 1, path: [.init(time: 0, distance: 1), .init(time: 10, distance: 11), .init(time: 20, distance: 1)])
        #expect(beacon.distance(at: -5) == 1)
        #expect(beacon.distance(at: 5) == 6)
        #expect(beacon.distance(at: 15) == 6)
        #expect(beacon.distance(at: 30) == 1)
    }

    @Test func eachBeaconAdvertisesAboutEveryHundredMilliseconds() {
        let walk = BeaconWalk(beacons: [
            walkingBeacon(minor: 1, path: [.init(time: 0, distance: 1), .init(time: 10, distance: 1)]),
            walkingBeacon(minor: 2, path: [.init(time: 0, distance: 2), .init(time: 10, distance: 2)]),
        ])
        var times: [UInt16: [Double]] = [:]
        var all: [Double] = []
        walk.forEachAdvert { sighting, _ in
            times[sighting.identity.minor, default: []].append(sighting.time)
            all.append(sighting.time)
        }
        #expect(all == all.sorted())
        for minor: UInt16 in [1, 2] {
            let beaconTimes = times[minor] ?? []
            #expect(beaconTimes.count == 101)
            let gaps = zip(beaconTimes.dropFirst(), beaconTimes).map { $0 - $1 }
            #expect(gaps.allSatisfy { (0.07...0.13).contains($0) })
        }
    }

    /// At a fixed 4 m, RSSI averages the path-loss model's -59 - 20 log10(4) = -71.0 dBm, with the noise asked for.
    @Test func rssiFollowsTheLogDistanceModel() {
        let walk = BeaconWalk(
            beacons: [walkingBeacon(minor: 1, path: [.init(time: 0, distance: 4), .init(time: 200, distance: 4)])],
            rssiNoise: 3, seed: 7)
        var samples: [Double] = []
        walk.forEachAdvert { sighting, distance in
            #expect(distance == 4)
            samples.append(Double(sighting.rssi))
        }
        let mean = samples.reduce(0, +) / Double(samples.count)
        let deviation = (samples.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(samples.count)).squareRoot()
        #expect(samples.count == 2_001)
        #expect(abs(mean - (-59 - 20 * log10(4.0))) < 0.3)
        #expect(abs(deviation - 3) < 0.3)
    }

    /// A walk written to a capture replays to exactly the sightings it generated.
    @Test(arguments: [AdvertisingReportFormat.legacy, .extended])
    func walkReplaysToItsSightings(_ format: AdvertisingReportFormat) throws {
        let walk = BeaconWalk(beacons: [
            walkingBeacon(minor: 1, path: [.init(time: 0, distance: 0.3), .init(time: 20, distance: 12)]),
            walkingBeacon(minor: 2, path: [.init(time: 0, distance: 8), .init(time: 20, distance: 0.5)]),
        ])
        var generated: [BeaconSighting] = []
        walk.forEachAdvert { sighting, _ in generated.append(sighting) }
        let file = TemporaryFile()
        let writer = try BTSnoopWriter(path: file.path)
        try walk.write(to: writer, format: format)
        try writer.close()
        let capture = try AdvertisingCapture(path: file.path)
        var replayed: [BeaconSighting] = []
        while let sighting = try capture.nextSighting() { replayed.append(sighting) }
        #expect(replayed == generated)

        let leaving = replayed.filter { $0.identity.minor == 1 }.map { Double($0.rssi) }
        let near: Double = leaving.prefix(20).reduce(0, +) / 20
        let far: Double = leaving.suffix(20).reduce(0, +) / 20
        #expect(near - far > 15, "walking away from 0.3 m to 12 m loses about 32 dB")
    }

    @Test func generatorsAreDeterministic() throws {
        func capture(seed: UInt64) throws -> Data {
            let file = TemporaryFile()
            let writer = try BTSnoopWriter(path: file.path)
            try BulkCapture(reports: 3_000, beacons: 50, seed: seed).write(to: writer)
            try writer.close()
            return try Data(contentsOf: URL(fileURLWithPath: file.path))
        }
        #expect(try capture(seed: 1) == capture(seed: 1))
        #expect(try capture(seed: 1) != capture(seed: 2))
        #expect(BulkCapture(beacons: 300).beaconFrames().count == 300)
        #expect(Set(BulkCapture(beacons: 300).beaconFrames().map(\.identity)).count == 300)
    }
}
