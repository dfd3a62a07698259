import Beacons
import Foundation
import LoyaltyTesting
import Testing

/// Someone near a scan advertising made-up iBeacon identities (or a capture of them) must not grow the scan's
/// memory: a million distinct identities once took `loyalty scan --replay` to 613-801 MB.
@Suite struct BeaconFloodTests {
    /// Peak resident memory the scan may reach, whatever it hears: about 18 MiB is the program's start.
    static let peakBound = 64 << 20

    @Test func aMillionMadeUpIdentitiesKeepTheScanUnder64MiB() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flood-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let capture = directory.appendingPathComponent("flood.btsnoop")
        try Self.writeFlood(to: capture.path, identities: 1_000_000)

        // GNU time forks before it runs the scan, so the peak it reports is the scan's alone (spawned from here,
        // the child's high-water mark would start at this test process's); the scan's output goes nowhere.
        let measured = try Binary(at: "sh").run(
            [
                "-c", #"/usr/bin/time -f "peak %M" "$@" > /dev/null"#, "sh", Binary("loyalty").url.path, "scan",
                "--replay", capture.path, "--json",
            ], environment: ["LOYALTY_HOME": directory.appendingPathComponent("home").path])
        #expect(measured.status == 0, "\(measured.stderr.suffix(2000))")
        let peakLine = try #require(measured.stderr.split(separator: "\n").last { $0.hasPrefix("peak ") })
        let peakKiB = try #require(Int(peakLine.dropFirst("peak ".count)))
        #expect(peakKiB * 1024 < Self.peakBound, "peak RSS \(peakKiB) KiB")
    }

    /// Half the identities each under a UUID of its own, half spread over 100 UUIDs of 5,000 pairs: every
    /// report a new beacon, four reports an event, 20 µs apart (20 s of capture).
    static func writeFlood(to path: String, identities: Int) throws {
        let writer = try BTSnoopWriter(path: path)
        var random = SplitMix64(seed: 23)
        func uuid() -> UUID {
            let (a, b) = (random.next(), random.next())
            return withUnsafeBytes(of: (a, b)) { UUID(uuid: $0.load(as: uuid_t.self)) }
        }
        let shared = (0..<100).map { _ in uuid() }
        let start = BTSnoopTimestamp(unixSeconds: 1_700_000_000)
        var reports: [AdvertisingReport] = []
        var event: [UInt8] = []
        for index in 0..<identities {
            let identity =
                index % 2 == 0
                ? BeaconIdentity(uuid: uuid(), major: 1, minor: 1)
                : BeaconIdentity(
                    uuid: shared[(index / 2) % 100], major: UInt16((index / 200) >> 16 & 0xFFFF),
                    minor: UInt16(truncatingIfNeeded: index / 200))
            let address = BluetoothAddress(
                wire: (UInt8(truncatingIfNeeded: index), UInt8(truncatingIfNeeded: index >> 8),
                    UInt8(truncatingIfNeeded: index >> 16), 0x5A, 0x5A, 0xC0))
            reports.append(
                AdvertisingReport(
                    format: .legacy, eventType: 3, addressType: 1, address: address, rssi: Int8(-45 - index % 40),
                    data: AdvertisingData.beacon(BeaconFrame(kind: .iBeacon, identity: identity, measuredPower: -59))))
            guard reports.count == 4 || index == identities - 1 else { continue }
            event.removeAll(keepingCapacity: true)
            try HCIEvent.append(reports, format: .legacy, to: &event)
            try writer.write(
                .event, event, at: BTSnoopTimestamp(microseconds: start.microseconds + Int64(index) * 20))
            reports.removeAll(keepingCapacity: true)
        }
        try writer.close()
    }
}
