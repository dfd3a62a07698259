import Beacons
@testable import DBus
import Foundation
import LoyaltyTesting
import Testing

@testable import BeaconRadio

/// What the advertisement monitor path registers with bluetoothd: the patterns' bytes, the application's
/// GetManagedObjects as a second connection reads it through a private bus (a real dbus-daemon), in the types
/// bluetoothd's src/adv_monitor.c insists on, and the monitor's scan parameters read from main.conf. (The path itself
/// runs against `bluetoothd -E` in LiveRadioTests.)
@Suite struct BlueZMonitorApplicationTests {
    static let matey = UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!
    static let mateyBytes: [UInt8] = [0x8F, 0x0C, 0x1D, 0xDC, 0x11, 0xE5, 0x4A, 0x07, 0x89, 0x10, 0x42, 0x59, 0x41, 0xB0, 0x72, 0xF9]

    @Test func patternsMatchTheRegionsUUIDsOrEveryIBeaconAndEddystone() {
        func flat(_ patterns: [BlueZMonitorApplication.Pattern]) -> [[UInt8]] {
            patterns.map { [$0.start, $0.type] + $0.content }
        }
        let eddystone: [UInt8] = [0, 0x16, 0xAA, 0xFE]
        #expect(flat(BlueZMonitorApplication.patterns(uuids: [])) == [[0, 0xFF, 0x4C, 0x00, 0x02, 0x15], eddystone])
        // A UUID named twice is one pattern; each pattern is the iBeacon prefix followed by the UUID's 16 bytes.
        let other = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        #expect(
            flat(BlueZMonitorApplication.patterns(uuids: [Self.matey, other, Self.matey])) == [
                [0, 0xFF, 0x4C, 0x00, 0x02, 0x15] + Self.mateyBytes,
                [0, 0xFF, 0x4C, 0x00, 0x02, 0x15, 0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5]
                    + [0xA7, 0x10, 0x96, 0xE0],
                eddystone,
            ])
        // The kernel takes a pattern of at most 31 bytes from position 0: 20 here.
        #expect(BlueZMonitorApplication.patterns(uuids: [Self.matey]).allSatisfy { Int($0.start) + $0.content.count <= 31 })
        // Too many UUIDs: one pattern for every iBeacon.
        let many = (0...BlueZMonitorApplication.maximumUUIDPatterns).map { _ in UUID() }
        #expect(flat(BlueZMonitorApplication.patterns(uuids: many)) == [[0, 0xFF, 0x4C, 0x00, 0x02, 0x15], eddystone])
    }

    @Test(arguments: ScanPower.allCases)
    func theApplicationArrivesInTheTypesBluetoothdReads(power: ScanPower) throws {
        let bus = try PrivateBus()
        let application = BlueZMonitorApplication(power: power, uuids: [Self.matey])
        let object = try ExportedOnThread(
            address: bus.address, paths: [BlueZMonitorApplication.rootPath, BlueZMonitorApplication.monitorPath]
        ) { call in application.reply(to: call) }
        defer { object.stop() }
        let caller = try MessageBus(address: bus.address)
        let reply = try caller.call(
            destination: object.uniqueName, path: BlueZMonitorApplication.rootPath,
            interface: "org.freedesktop.DBus.ObjectManager", method: "GetManagedObjects")
        // a{oa{sa{sv}}}: the one monitor object, its one interface.
        guard case .dictionary(let objects)? = reply.first, objects.count == 1 else {
            Issue.record("not one object: \(reply)")
            return
        }
        #expect(objects[0].key == .objectPath(BlueZMonitorApplication.monitorPath))
        let monitor = try #require(objects[0].value["org.bluez.AdvertisementMonitor1"])
        #expect(monitor["Type"] == .variant(.string("or_patterns")))
        // a(yyay): each pattern a structure of start position, AD type and content.
        #expect(
            monitor["Patterns"]
                == .variant(
                    .array([
                        .structure([.byte(0), .byte(0xFF), .array(([0x4C, 0x00, 0x02, 0x15] + Self.mateyBytes).map(DBusValue.byte))]),
                        .structure([.byte(0), .byte(0x16), .array([.byte(0xAA), .byte(0xFE)])]),
                    ])))
        // RSSI thresholds are int16 and timeouts uint16, or absent (bluetoothd refuses the monitor otherwise).
        let names = ["RSSIHighThreshold", "RSSIHighTimeout", "RSSILowThreshold", "RSSILowTimeout"]
        if power == .high {
            #expect(names.allSatisfy { monitor[$0] == nil }, "\(monitor)")
        } else {
            #expect(monitor["RSSIHighThreshold"] == .variant(.int16(-127)))
            #expect(monitor["RSSIHighTimeout"] == .variant(.uint16(1)))
            #expect(monitor["RSSILowThreshold"] == .variant(.int16(-127)))
            #expect(monitor["RSSILowTimeout"] == .variant(.uint16(3)))
        }
        let type = try caller.call(
            destination: object.uniqueName, path: BlueZMonitorApplication.monitorPath,
            interface: "org.freedesktop.DBus.Properties", method: "Get",
            arguments: [.string("org.bluez.AdvertisementMonitor1"), .string("Type")])
        #expect(type == [.variant(.string("or_patterns"))])
        #expect(throws: DBusFailure.self) {
            try caller.call(
                destination: object.uniqueName, path: BlueZMonitorApplication.monitorPath,
                interface: "org.freedesktop.DBus.Properties", method: "Get",
                arguments: [.string("org.bluez.AdvertisementMonitor1"), .string("Name")])
        }
    }

    /// Eddystone arrives as Device1's ServiceData, keyed by the 128-bit text of 0xFEAA: the report the scan makes
    /// of it is a frame the beacon parser reads, as is an iBeacon's ManufacturerData beside it.
    @Test func serviceAndManufacturerDataBecomeAReportTheBeaconParserReads() throws {
        let uid: [UInt8] = [0x00, 0xEE] + Array(0..<10) + [1, 2, 3, 4, 5, 6] + [0, 0]
        let data = BlueZScanner.advertisingData(
            manufacturerData: nil,
            serviceData: .dictionary([
                .init(key: .string("0000FEAA-0000-1000-8000-00805F9B34FB"), value: .variant(.array(uid.map(DBusValue.byte)))),
                .init(key: .string("6e400001-b5a3-f393-e0a9-e50e24dcca9e"), value: .variant(.array([.byte(1)]))),
            ]))
        #expect(data == [UInt8(uid.count + 3), 0x16, 0xAA, 0xFE] + uid)
        let event = try #require(
            BlueZScanner.advertisingReportEvent(address: [1, 2, 3, 4, 5, 6], randomAddress: false, rssi: -70, data: data))
        var carried: [[UInt8]] = []
        try event.withUnsafeBytes { bytes in
            var reports = try AdvertisingReportIterator(event: bytes)
            while let report = try reports.next() { carried.append(Array(report.data)) }
        }
        #expect(carried == [data])
        let frames = try AdvertisingData.frames(in: data)
        guard case .eddystone? = frames.first, frames.count == 1 else {
            Issue.record("not one Eddystone frame: \(frames)")
            return
        }
        #expect(BlueZScanner.shortUUID("0000feaa-0000-1000-8000-00805f9b34fb") == 0xFEAA)
        #expect(BlueZScanner.shortUUID("0000feaa-0000-1000-8000-00805f9b34fc") == nil)
        #expect(BlueZScanner.shortUUID("feaa") == nil)
    }

    @Test func theMonitorsScanParametersComeFromMainConfOrTheKernelsDefaults() {
        #expect(BlueZMonitorApplication.scanParameters(mainConfiguration: nil) == .kernelDefault)
        #expect(BlueZMonitorApplication.ScanParameters.kernelDefault.summary == "30.0 ms every 60 ms (50 %, BlueZ's defaults)")
        let commented = "[LE]\n#ScanIntervalAdvMonitor=2240\n#ScanWindowAdvMonitor=224\n"
        #expect(BlueZMonitorApplication.scanParameters(mainConfiguration: commented) == .kernelDefault)
        let low = "[General]\nScanWindowAdvMonitor=1\n[LE]\nScanIntervalAdvMonitor = 2240\nScanWindowAdvMonitor=0xE0\n[Policy]\n"
        let parameters = BlueZMonitorApplication.scanParameters(mainConfiguration: low)
        #expect(parameters == .init(interval: 2240, window: 224, configured: true))
        #expect(parameters.summary.hasPrefix("140.0 ms every 1400 ms (10 %, ScanIntervalAdvMonitor and ScanWindowAdvMonitor in"))
        // Out of bluetoothd's range 4...0x4000, or not a number: ignored, as bluetoothd ignores it.
        let bad = "[LE]\nScanIntervalAdvMonitor=0x8000\nScanWindowAdvMonitor=many\n"
        #expect(BlueZMonitorApplication.scanParameters(mainConfiguration: bad) == .kernelDefault)
    }

    /// doctor's scan-power line on the monitor path: the kernel's passive duty cycle, and for a profile it does not
    /// match, the main.conf lines that would.
    @Test func doctorSaysTheMonitorsDutyCycleAndHowToMatchTheProfile() {
        let low = RadioDiagnosis.monitorScanPower(.low, asked: "--power low", mainConfiguration: nil)
        #expect(low.detail.contains("the kernel listens passively (no scan requests) 30.0 ms every 60 ms (50 %, BlueZ's defaults)"))
        #expect(low.detail.contains("after 3 s of silence"))
        #expect(low.remedy?.contains("ScanIntervalAdvMonitor=2240 and ScanWindowAdvMonitor=224 under [LE]") == true)
        let matched = RadioDiagnosis.monitorScanPower(
            .low, asked: "--power low", mainConfiguration: "[LE]\nScanIntervalAdvMonitor=2240\nScanWindowAdvMonitor=224\n")
        #expect(matched.remedy == nil && matched.detail.contains("140.0 ms every 1400 ms (10 %"))
        let high = RadioDiagnosis.monitorScanPower(.high, asked: "--power high", mainConfiguration: nil)
        #expect(high.remedy == nil && high.detail.contains("reports every matching advertisement"))
    }

    /// The scan reads bluetoothd's calls with `nextMessage`, not a dispatcher: a call to an exported object is answered
    /// by it and handed back, a call to a path nothing is exported at gets UnknownObject (not silence, which would
    /// keep the caller waiting for its timeout).
    @Test func nextMessageAnswersCallsToExportedObjectsAndRefusesOthers() throws {
        let bus = try PrivateBus()
        let address = bus.address
        let application = BlueZMonitorApplication(power: .high, uuids: [])
        let done = DispatchSemaphore(value: 0)
        let ready = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var served: [String] = []
        nonisolated(unsafe) var name = ""
        Thread.detachNewThread {
            defer { done.signal() }
            guard let monitor = try? MessageBus(address: address),
                (try? monitor.export(path: BlueZMonitorApplication.rootPath) { application.reply(to: $0) }) != nil
            else {
                ready.signal()
                return
            }
            name = monitor.uniqueName
            ready.signal()
            while served.count < 2, let incoming = try? monitor.nextMessage(timeoutMilliseconds: 5000, wakeup: -1) {
                if case .call(let call) = incoming { served.append("\(call.path) \(call.member)") }
            }
        }
        ready.wait()
        try #require(!name.isEmpty)
        let caller = try MessageBus(address: bus.address)
        let objects = try caller.call(
            destination: name, path: BlueZMonitorApplication.rootPath, interface: "org.freedesktop.DBus.ObjectManager",
            method: "GetManagedObjects", timeoutMilliseconds: 3000)
        guard case .dictionary(let entries)? = objects.first else {
            Issue.record("no managed objects: \(objects)")
            return
        }
        #expect(entries.first?.key == .objectPath(BlueZMonitorApplication.monitorPath))
        do {
            try caller.call(
                destination: name, path: "/elsewhere", interface: "org.bluez.AdvertisementMonitor1", method: "Activate",
                timeoutMilliseconds: 3000)
            Issue.record("a call to nothing was answered")
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.UnknownObject", "\(error)")
        }
        done.wait()
        #expect(served == ["\(BlueZMonitorApplication.rootPath) GetManagedObjects", "/elsewhere Activate"])
    }
}
