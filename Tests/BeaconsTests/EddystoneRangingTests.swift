import Beacons
import Foundation
import Testing

private let uid = EddystoneUID(
    namespace: EddystoneNamespace(bytes: [0xED, 0xD1, 0xEB, 0xEA, 0xC0, 0x4E, 0x5D, 0xEF, 0xA0, 0x17])!,
    instance: [1, 2, 3, 4, 5, 6])
private let otherUID = EddystoneUID(namespace: uid.namespace, instance: [9, 9, 9, 9, 9, 9])
private let addressA = BluetoothAddress(wire: (0xA, 0, 0, 0, 0, 0xC0))
private let addressB = BluetoothAddress(wire: (0xB, 0, 0, 0, 0, 0xC0))
private let plainTLM = TelemetryFrame(batteryMillivolts: 3000, temperatureBits: 0x1580, advertisingCount: 10, uptimeTenths: 100)
private let laterTLM = TelemetryFrame(batteryMillivolts: 2900, temperatureBits: 0x1500, advertisingCount: 20, uptimeTenths: 200)

/// The sightings one HCI event with one report of `frame` from `address` gives, as a replay or a scan reads it.
private func sightings(_ frame: EddystoneFrame, from address: BluetoothAddress, rssi: Int8 = -60, at time: Double) throws
    -> [BeaconSighting]
{
    let report = AdvertisingReport(
        format: .legacy, eventType: 3, addressType: 1, address: address, rssi: rssi, data: AdvertisingData.eddystone(frame))
    return HCIEvent.beaconSightings(inEvent: try HCIEvent.advertisingReportEvent([report], format: .legacy), at: time)
}

@Suite struct EddystoneRangingTests {
    @Test func uidAndEIDFramesBecomeSightingsAndURLFramesDoNot() throws {
        let uidSighting = try #require(try sightings(.uid(uid, rangingPower: -20), from: addressA, at: 1).first)
        #expect(uidSighting.frame.kind == .eddystoneUID)
        #expect(uidSighting.identity.eddystoneUID == uid)
        #expect(uidSighting.frame.measuredPower == -61, "0 m ranging power less 41 dB is the power at 1 m")
        #expect(uidSighting.frame.eddystoneFrame == .uid(uid, rangingPower: -20))
        let eid = EphemeralID(0x0102_0304_0506_0708)
        let eidSighting = try #require(try sightings(.eid(eid, rangingPower: -100), from: addressA, at: 1).first)
        #expect(eidSighting.frame.kind == .eddystoneEID && eidSighting.identity.ephemeralID == eid)
        #expect(eidSighting.frame.measuredPower == -128, "clamped")
        #expect(try sightings(.url(EddystoneURL(scheme: 3, encoded: [0x61])!, rangingPower: 0), from: addressA, at: 1).isEmpty)
        let telemetry = try #require(try sightings(.telemetry(plainTLM), from: addressA, at: 1).first)
        #expect(telemetry.frame.kind == .eddystoneTelemetry && telemetry.telemetry == .plain(plainTLM))
    }

    /// A UID beacon 1 m away heard at its ranging power less 41 dB is near, as an iBeacon heard at its measured power.
    @Test func rangedWithTheProximityClassesOfAnIBeacon() throws {
        var ranger = try Ranger()
        for step in 0..<30 {
            for sighting in try sightings(.uid(uid, rangingPower: -20), from: addressA, rssi: -61, at: Double(step) * 0.1) {
                _ = ranger.observe(sighting)
            }
        }
        let beacon = try #require(ranger.snapshot(at: 3).beacons.first)
        #expect(beacon.kind == .eddystoneUID && beacon.identity.eddystoneUID == uid)
        #expect(beacon.proximity == .near)
        #expect(abs((beacon.distance ?? 0) - 1) < 0.2)
    }

    @Test func telemetryGoesToTheBeaconOfItsAddress() throws {
        var ranger = try Ranger()
        let heard = try sightings(.uid(uid, rangingPower: -20), from: addressA, at: 0)
            + sightings(.uid(otherUID, rangingPower: -20), from: addressB, at: 0.1)
            + sightings(.telemetry(plainTLM), from: addressA, at: 0.2)
        for sighting in heard { _ = ranger.observe(sighting) }
        let beacons = ranger.snapshot(at: 0.5).beacons
        #expect(beacons.first { $0.identity.eddystoneUID == uid }?.telemetry == .plain(plainTLM))
        #expect(beacons.first { $0.identity.eddystoneUID == otherUID }?.telemetry == nil)
    }

    /// Addresses rotate: once the address carries another beacon's frames, its TLM is that beacon's, and the first
    /// keeps what it had.
    @Test func telemetryOfAnAddressThatChangedHandsGoesToItsNewBeacon() throws {
        var ranger = try Ranger()
        let heard = try sightings(.uid(uid, rangingPower: -20), from: addressA, at: 0)
            + sightings(.telemetry(plainTLM), from: addressA, at: 0.1)
            + sightings(.uid(otherUID, rangingPower: -20), from: addressA, at: 0.2)
            + sightings(.telemetry(laterTLM), from: addressA, at: 0.3)
        for sighting in heard { _ = ranger.observe(sighting) }
        let beacons = ranger.snapshot(at: 0.5).beacons
        #expect(beacons.first { $0.identity.eddystoneUID == uid }?.telemetry == .plain(plainTLM))
        #expect(beacons.first { $0.identity.eddystoneUID == otherUID }?.telemetry == .plain(laterTLM))
    }

    @Test func telemetryOfAnAddressWithNoEddystoneBeaconIsNobodys() throws {
        var ranger = try Ranger()
        let iBeacon = BeaconFrame(kind: .iBeacon, identity: BeaconIdentity(uuid: UUID(), major: 1, minor: 1), measuredPower: -59)
        _ = ranger.observe(BeaconSighting(frame: iBeacon, address: addressA, rssi: -60, time: 0))
        for sighting in try sightings(.telemetry(plainTLM), from: addressA, at: 0.1) { _ = ranger.observe(sighting) }
        let beacons = ranger.snapshot(at: 0.5).beacons
        #expect(beacons.count == 1 && beacons[0].telemetry == nil)
    }

    /// A walk of iBeacons and Eddystone-UID beacons, written and replayed twice: the same sightings, both formats.
    @Test func mixedCaptureReplaysDeterministically() throws {
        let iBeacon = BeaconFrame(
            kind: .iBeacon, identity: BeaconIdentity(uuid: UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!, major: 1, minor: 1),
            measuredPower: -59)
        let walk = BeaconWalk(
            beacons: [
                .init(frame: iBeacon, address: addressA, path: [.init(time: 0, distance: 5), .init(time: 10, distance: 0.5)]),
                .init(
                    frame: BeaconFrame(kind: .eddystoneUID, identity: BeaconIdentity(eddystoneUID: uid), measuredPower: -61),
                    address: addressB, path: [.init(time: 0, distance: 1), .init(time: 10, distance: 8)]),
            ])
        let file = TemporaryFile()
        let writer = try BTSnoopWriter(path: file.path)
        try walk.write(to: writer)
        try writer.close()
        func replay() throws -> [BeaconSighting] {
            let capture = try AdvertisingCapture(path: file.path)
            var heard: [BeaconSighting] = []
            while let sighting = try capture.nextSighting() { heard.append(sighting) }
            return heard
        }
        let first = try replay()
        #expect(try replay() == first)
        #expect(Set(first.map(\.frame.kind)) == [.iBeacon, .eddystoneUID])
        #expect(first.filter { $0.frame.kind == .eddystoneUID }.allSatisfy { $0.identity.eddystoneUID == uid && $0.frame.measuredPower == -61 })
    }
}

@Suite struct EddystoneRegionTests {
    private func sighting(_ uid: EddystoneUID, at time: Double) -> BeaconSighting {
        BeaconSighting(
            frame: BeaconFrame(kind: .eddystoneUID, identity: BeaconIdentity(eddystoneUID: uid), measuredPower: -61),
            address: addressA, rssi: -60, time: time)
    }

    @Test func namespaceAndInstanceRegionsParseAndPrint() throws {
        let region = try BeaconIdentityConstraint(parsing: "EDD1EBEAC04E5DEFA017")
        #expect(region.isEddystone && region.namespace == uid.namespace && region.instance == nil)
        #expect(region.description == "EDD1EBEAC04E5DEFA017")
        let one = try BeaconIdentityConstraint(parsing: "edd1ebeac04e5defa017:010203040506")
        #expect(one.description == "EDD1EBEAC04E5DEFA017:010203040506")
        #expect(one.matches(BeaconIdentity(eddystoneUID: uid)) && !one.matches(BeaconIdentity(eddystoneUID: otherUID)))
        #expect(region.matches(BeaconIdentity(eddystoneUID: otherUID)))
        for bad in ["EDD1EBEAC04E5DEFA01Z", "EDD1EBEAC04E5DEFA017:0102030405", "EDD1EBEAC04E5DEFA017:010203040506:1"] {
            #expect(throws: BeaconIdentityConstraint.ParseError.malformed(bad)) { try BeaconIdentityConstraint(parsing: bad) }
        }
    }

    /// A namespace region is entered by any of its beacons and exited after the timeout; an instance region only
    /// by its own; an iBeacon whose UUID starts with the namespace's bytes enters neither.
    @Test func namespaceRegionsAreMonitoredAsUUIDRegionsAre() throws {
        var monitor = try RegionMonitor(configuration: .init(exitTimeout: 10))
        let namespaceRegion = BeaconIdentityConstraint(namespace: uid.namespace)
        let instanceRegion = BeaconIdentityConstraint(namespace: uid.namespace, instance: otherUID.instance)
        monitor.add(BeaconRegion(namespaceRegion))
        monitor.add(BeaconRegion(instanceRegion))
        let lookalike = BeaconFrame(
            kind: .iBeacon, identity: BeaconIdentity(uuid: namespaceRegion.uuid, major: 0, minor: 0), measuredPower: -59)
        #expect(monitor.observe(BeaconSighting(frame: lookalike, address: addressB, rssi: -60, time: 0)).isEmpty)
        #expect(monitor.observe(sighting(uid, at: 1)) == [RegionEvent(kind: .enter, region: namespaceRegion, time: 1)])
        #expect(monitor.observe(sighting(uid, at: 2)).isEmpty)
        #expect(monitor.observe(sighting(otherUID, at: 3)) == [RegionEvent(kind: .enter, region: instanceRegion, time: 3)])
        #expect(monitor.advance(to: 14) == [RegionEvent(kind: .exit, region: namespaceRegion, time: 13), RegionEvent(kind: .exit, region: instanceRegion, time: 13)])
        #expect(monitor.state(for: namespaceRegion) == .outside)
    }

    @Test func everyNamespaceHeardBecomesARegion() throws {
        var monitor = try RegionMonitor(configuration: .init(exitTimeout: 10, monitorsEveryUUIDHeard: true))
        #expect(monitor.observe(sighting(uid, at: 0)) == [RegionEvent(kind: .enter, region: BeaconIdentityConstraint(namespace: uid.namespace), time: 0)])
        #expect(monitor.observe(sighting(otherUID, at: 1)).isEmpty, "the same namespace")
    }
}
