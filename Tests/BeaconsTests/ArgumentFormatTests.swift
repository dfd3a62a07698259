import Beacons
import Foundation
import Testing

/// The text formats `loyalty` reads into beacon values: pasted hex and simulated walks.
@Suite struct ArgumentFormatTests {
    @Test func hexIsReadAsPeoplePasteIt() {
        #expect([UInt8](pastedHex: "0x02 01:06-1a") == [0x02, 0x01, 0x06, 0x1A])
        #expect([UInt8](pastedHex: "") == [])
        for bad in ["0", "0g", "12 3", "xyz"] {
            #expect([UInt8](pastedHex: bad) == nil, "\(bad)")
        }
    }

    @Test func aWalkIsABeaconAndItsDistancesOverTime() throws {
        let beacon = try #require(
            BeaconWalk.Beacon(
                parsing: "8F0C1DDC-11E5-4A07-8910-425941B072F9:1:2@0=12,10=1,20=12", measuredPower: -59, index: 258))
        #expect(beacon.frame.identity.major == 1 && beacon.frame.identity.minor == 2 && beacon.frame.measuredPower == -59)
        #expect(beacon.path == [.init(time: 0, distance: 12), .init(time: 10, distance: 1), .init(time: 20, distance: 12)])
        #expect(beacon.address.description.hasSuffix("01:02"))
        let uuid = "8F0C1DDC-11E5-4A07-8910-425941B072F9"
        for bad in [
            "\(uuid):1@0=1", "\(uuid):1:2", "\(uuid):1:2@", "\(uuid):1:2@5=1,5=2", "\(uuid):1:2@0=0", "\(uuid):1:2@-1=1",
            "\(uuid):1:2@0=inf", "nope:1:2@0=1",
        ] {
            #expect(BeaconWalk.Beacon(parsing: bad, measuredPower: -59, index: 0) == nil, "\(bad)")
        }
    }

    @Test func aBeaconIsExactlyUUIDMajorMinor() throws {
        let uuid = "8F0C1DDC-11E5-4A07-8910-425941B072F9"
        #expect(try BeaconIdentity(parsing: "\(uuid):1:2") == BeaconIdentity(uuid: UUID(uuidString: uuid)!, major: 1, minor: 2))
        for bad in ["\(uuid):1", uuid, "\(uuid):1:65536", "nope:1:2", "\(uuid):1:2:3"] {
            #expect(throws: BeaconIdentityConstraint.ParseError.notABeacon(bad)) { try BeaconIdentity(parsing: bad) }
        }
        #expect(
            BeaconIdentityConstraint.ParseError.notABeacon("x").description
                == "'x' is not a beacon: use UUID:MAJOR:MINOR (major and minor 0...65535)")
    }

    @Test func calibrationSamplesKeepOneBeaconForTheSecondsAfterItIsFirstHeard() {
        let uuid = UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!
        let wanted = BeaconIdentity(uuid: uuid, major: 1, minor: 1)
        func sighting(_ identity: BeaconIdentity, at time: Double, rssi: Int8) -> BeaconSighting {
            BeaconSighting(
                frame: BeaconFrame(kind: .iBeacon, identity: identity, measuredPower: -60),
                address: BluetoothAddress(wire: (1, 2, 3, 4, 5, 6)), rssi: rssi, time: time)
        }
        var samples = CalibrationSamples(of: wanted)
        let kept = [
            samples.add(sighting(BeaconIdentity(uuid: uuid, major: 1, minor: 2), at: 0, rssi: -40), seconds: 5),
            samples.add(sighting(wanted, at: 10, rssi: -58), seconds: 5),
            samples.add(sighting(wanted, at: 15, rssi: -62), seconds: 5),
            samples.add(sighting(wanted, at: 15.5, rssi: -70), seconds: 5),
        ]
        #expect(kept == [true, true, true, false])
        #expect(samples.rssi == [-58, -62] && samples.span == 5 && samples.advertisedPower == -60)
    }
}

@Suite struct ReplayPacingTests {
    @Test func waitsSoCaptureAndWallTimeAdvanceTogether() {
        var pacing = ReplayPacing()
        #expect(pacing.delay(before: 100, now: 5000) == nil)  // the origin
        #expect(pacing.delay(before: 101.5, now: 5000.5) == 1)  // 1.5 s of capture, 0.5 s gone
        #expect(pacing.delay(before: 102, now: 5003) == nil)  // behind: no wait
        #expect(pacing.delay(before: 1000, now: 5003) == 60)  // a long gap waits at most the limit
    }
}

@Suite struct HexTextTests {
    @Test func bytesReadBackFromTheirHexText() {
        let bytes: [UInt8] = [0x04, 0x3E, 0x0A, 0xFF]
        #expect(bytes.hexText() == "043E0AFF" && bytes.hexText(separator: " ") == "04 3E 0A FF")
        #expect([UInt8](pastedHex: bytes.hexText(separator: ":")) == bytes)
    }
}
