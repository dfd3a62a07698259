import Beacons
import DBus
import Foundation

/// What a scan registers with bluetoothd's org.bluez.AdvertisementMonitorManager1 (doc/advertisement-monitor-api.txt):
/// an application object (an ObjectManager) holding one AdvertisementMonitor1 of type `or_patterns` that matches
/// iBeacons (manufacturer data 4C 00 02 15, then the UUID when the scan names its regions) and Eddystone (service data
/// AA FE). While a monitor is registered the kernel scans passively with main.conf's ScanIntervalAdvMonitor and
/// ScanWindowAdvMonitor, and bluetoothd tells the monitor of each advertiser its patterns match (DeviceFound) and
/// of each that fell silent (DeviceLost).
struct BlueZMonitorApplication {
    static let rootPath = "/loyalty/monitor"
    static let monitorPath = "/loyalty/monitor/beacons"
    static let managerInterface = "org.bluez.AdvertisementMonitorManager1"
    static let monitorInterface = "org.bluez.AdvertisementMonitor1"
    /// A pattern each for at most this many UUIDs; beyond, one pattern for every iBeacon.
    static let maximumUUIDPatterns = 16

    /// bluetoothd's RSSI filter (all four set, or none): found after `highTimeout` seconds above `highThreshold`,
    /// lost after `lowTimeout` seconds without an advertisement above `lowThreshold`.
    struct RSSIFilter: Hashable {
        var highThreshold: Int16
        var highTimeout: UInt16
        var lowThreshold: Int16
        var lowTimeout: UInt16
    }

    typealias Pattern = (start: UInt8, type: UInt8, content: [UInt8])

    let patterns: [Pattern]
    /// nil: bluetoothd calls DeviceFound for every matching advertisement (each one a reading).
    let rssi: RSSIFilter?

    init(power: ScanPower, uuids: [UUID]) {
        patterns = Self.patterns(uuids: uuids)
        rssi = Self.rssiFilter(power)
    }

    /// `high` ranges from every advertisement: no filter, so each is a DeviceFound. `balanced` and `low` let
    /// bluetoothd keep the advertisements to itself: any signal (-127 dBm) finds a beacon after a second, and
    /// three seconds without one lose it (the least the API takes is 1 s, and bluetoothd listens about half the
    /// time by default); the scan carries a found beacon's last reading forward meanwhile.
    static func rssiFilter(_ power: ScanPower) -> RSSIFilter? {
        switch power {
        case .high: nil
        case .balanced, .low: RSSIFilter(highThreshold: -127, highTimeout: 1, lowThreshold: -127, lowTimeout: 3)
        }
    }

    /// iBeacon's manufacturer data (Apple's company identifier, little-endian, and the 02 15 type) followed by
    /// each UUID, or alone for every iBeacon when `uuids` is empty or too many; and Eddystone's service UUID.
    static func patterns(uuids: [UUID]) -> [Pattern] {
        let iBeacon: [UInt8] = [0x4C, 0x00, 0x02, 0x15]
        var unique: [UUID] = []
        for uuid in uuids where !unique.contains(uuid) { unique.append(uuid) }
        let contents: [[UInt8]] =
            unique.isEmpty || unique.count > maximumUUIDPatterns
            ? [iBeacon] : unique.map { uuid in iBeacon + withUnsafeBytes(of: uuid.uuid) { Array($0) } }
        let eddystone: Pattern = (start: 0, type: AdvertisingDataType.serviceData16BitUUID, content: [0xAA, 0xFE])
        return contents.map { (start: 0, type: AdvertisingDataType.manufacturerSpecificData, content: $0) } + [eddystone]
    }

    /// The monitor's AdvertisementMonitor1 properties, in the types bluetoothd reads them with (src/adv_monitor.c).
    var properties: [(String, DBusPropertyValue)] {
        var properties: [(String, DBusPropertyValue)] = [("Type", .string("or_patterns")), ("Patterns", .patterns(patterns))]
        if let rssi {
            properties += [
                ("RSSIHighThreshold", .int16(rssi.highThreshold)), ("RSSIHighTimeout", .uint16(rssi.highTimeout)),
                ("RSSILowThreshold", .int16(rssi.lowThreshold)), ("RSSILowTimeout", .uint16(rssi.lowTimeout)),
            ]
        }
        return properties
    }

    /// The answer to a call to the application's objects other than the monitor's own methods: the root's
    /// GetManagedObjects (how bluetoothd finds the monitor) and the monitor's properties.
    func reply(to call: DBusMethodCall) -> DBusMethodReply {
        switch (call.path, call.interface, call.member) {
        case (Self.rootPath, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"):
            return .arguments([.managedObjects([(Self.monitorPath, [(Self.monitorInterface, properties)])])])
        case (Self.monitorPath, "org.freedesktop.DBus.Properties", "GetAll"):
            return .arguments([.properties(call.arguments.first?.string == Self.monitorInterface ? properties : [])])
        case (Self.monitorPath, "org.freedesktop.DBus.Properties", "Get"):
            let name = call.arguments.count > 1 ? call.arguments[1].string : nil
            guard call.arguments.first?.string == Self.monitorInterface,
                let value = properties.first(where: { $0.0 == name })?.1
            else {
                return .error(name: "org.freedesktop.DBus.Error.InvalidArgs", message: "no property \(name ?? "")")
            }
            return .arguments([.variant(value)])
        default:
            return .error(
                name: "org.freedesktop.DBus.Error.UnknownMethod",
                message: "\(call.interface).\(call.member) is not offered by \(call.path)")
        }
    }
}

extension BlueZMonitorApplication {
    /// The kernel's passive scan while a monitor is registered, in 0.625 ms units: `ScanIntervalAdvMonitor` and
    /// `ScanWindowAdvMonitor` of main.conf's [LE] section (bluetoothd loads them into the kernel), else the kernel's
    /// defaults (net/bluetooth/hci_core.c: 0x0060 and 0x0030, 60 ms and 30 ms).
    struct ScanParameters: Hashable {
        static let kernelDefault = ScanParameters(interval: 0x0060, window: 0x0030, configured: false)

        var interval: UInt16
        var window: UInt16
        /// Whether main.conf set either.
        var configured: Bool

        var dutyCycle: Double { Double(window) / Double(interval) }

        /// What `loyalty doctor` says: "30.0 ms every 60 ms (50 %, BlueZ's defaults)".
        var summary: String {
            String(
                format: "%.1f ms every %.0f ms (%.0f %%, %@)", Double(window) * 0.625, Double(interval) * 0.625, dutyCycle * 100,
                configured ? "ScanIntervalAdvMonitor and ScanWindowAdvMonitor in \(BlueZMonitorApplication.mainConfiguration)" : "BlueZ's defaults")
        }
    }

    static let mainConfiguration = "/etc/bluetooth/main.conf"

    /// The parameters `text` (main.conf) sets; the defaults for what it leaves out or sets outside 4...0x4000, as
    /// bluetoothd does (src/main.c).
    static func scanParameters(mainConfiguration text: String?) -> ScanParameters {
        var parameters = ScanParameters.kernelDefault
        var section = ""
        for rawLine in (text ?? "").split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") {
                section = line
                continue
            }
            guard section == "[LE]", !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let text = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            let value = text.lowercased().hasPrefix("0x") ? Int(text.dropFirst(2), radix: 16) : Int(text)
            guard let value, (0x0004...0x4000).contains(value) else { continue }
            switch key {
            case "ScanIntervalAdvMonitor": parameters.interval = UInt16(value)
            case "ScanWindowAdvMonitor": parameters.window = UInt16(value)
            default: continue
            }
            parameters.configured = true
        }
        return parameters
    }
}
