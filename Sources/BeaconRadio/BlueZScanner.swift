import Beacons
import DBus
import Foundation

/// Scanning through bluetoothd's D-Bus API, beside a bluetoothd that is discovering: a raw scan there would leave
/// bluetoothd's discovery dead, so ours joins it as one more session (SetDiscoveryFilter, StartDiscovery, and a
/// StopDiscovery that ends only ours). Each ManufacturerData update becomes a bare LE Advertising Report event,
/// so the rest of the scan is the same. docs/RADIO.md says why this path and not another.
public final class BlueZScanner: LiveScanner, @unchecked Sendable {
    public let adapter: String
    public var path: String { "bluetoothd (D-Bus)" }
    private let bus: MessageBus
    private let adapterPath: String
    private let clock: any BeaconClock
    private let wakeup: WakeupPipe
    private var devices = BlueZDevices()

    /// Whether bluetoothd is on the system bus: then it manages the adapters.
    public static func bluetoothdRuns() -> Bool {
        guard let bus = try? MessageBus.system() else { return false }
        return bus.nameHasOwner("org.bluez")
    }

    /// Whether bluetoothd is discovering on `adapter` now (another program asked it to). Throws when bluetoothd
    /// runs but the bus refuses this user: it may be discovering, and a raw scan would end that.
    public static func bluetoothdDiscovers(adapter: String?) throws(RadioError) -> Bool {
        guard let bus = try? MessageBus.system(), bus.nameHasOwner("org.bluez") else { return false }
        do {
            let reply = try bus.call(
                destination: "org.bluez", path: "/org/bluez/\(HCITransport.adapterName(adapter))",
                interface: "org.freedesktop.DBus.Properties", method: "Get",
                arguments: [.string("org.bluez.Adapter1"), .string("Discovering")])
            return reply.first?.unwrapped == .bool(true)
        } catch {
            if error.refusedByPolicy { throw .busRefusesUser(error.message) }
            return false
        }
    }

    /// Whether bluetoothd offers passive monitoring on `adapter` (org.bluez.AdvertisementMonitorManager1: BlueZ 5.66
    /// only with its experimental interfaces, `bluetoothd -E`).
    public static func bluetoothdOffersAdvertisementMonitors(adapter: String?) -> Bool {
        guard let bus = try? MessageBus.system(), bus.nameHasOwner("org.bluez") else { return false }
        let reply = try? bus.call(
            destination: "org.bluez", path: "/org/bluez/\(HCITransport.adapterName(adapter))",
            interface: "org.freedesktop.DBus.Properties", method: "Get",
            arguments: [.string("org.bluez.AdvertisementMonitorManager1"), .string("SupportedMonitorTypes")])
        return reply != nil
    }

    public init(adapter: String? = nil, clock: any BeaconClock = MonotonicBeaconClock()) throws(RadioError) {
        let name = HCITransport.adapterName(adapter)
        do { bus = try MessageBus.system() } catch { throw .bluez(name, error.description) }
        self.adapter = name
        adapterPath = "/org/bluez/\(name)"
        self.clock = clock
        wakeup = try WakeupPipe()
    }

    public func run(
        tickInterval: Double? = nil, onTick: (Double) -> Void = { _ in },
        onResume: (_ time: Double, _ slept: Double) -> Void = { _, _ in }, _ onEvent: (HCIEventPacket) -> Void
    ) throws(RadioError) {
        do throws(DBusFailure) {
            try bus.addMatch(
                "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',"
                    + "member='PropertiesChanged',path_namespace='\(adapterPath)'")
            try bus.addMatch(
                "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.ObjectManager',member='InterfacesAdded'")
            try adapterCall("SetDiscoveryFilter", [.properties([("Transport", .string("le")), ("DuplicateData", .bool(true))])])
        } catch {
            throw .bluez(adapter, error.description)
        }
        // bluetoothd keeps a client's filter past its StopDiscovery, and when that client leaves the bus it stops
        // the adapter's whole discovery if exactly one other client discovers (src/adapter.c: discovery_disconnect
        // calls discovery_stop for a client of set_filter_list). An empty filter drops ours, and its watch.
        defer { _ = try? adapterCall("SetDiscoveryFilter", [.properties([])]) }
        do throws(DBusFailure) { try adapterCall("StartDiscovery") } catch { throw .bluez(adapter, error.description) }
        // What the running discovery heard before we joined: its duplicate filter may never report it again.
        // A device has an RSSI only while the current discovery has seen it.
        for event in devicesHeardSoFar() { onEvent(HCIEventPacket(bytes: event, time: clock.now())) }
        var failure: RadioError?
        var ticker = ScanTicker(interval: tickInterval, clock: clock)
        while true {
            do throws(DBusFailure) {
                let wait = ticker.waitMilliseconds(clock: clock)
                let signal = try bus.nextSignal(timeoutMilliseconds: wait, wakeup: wakeup.readEnd)
                if signal == nil, wakeup.isSignalled { break }
                // bluetoothd restarts its discovery after a resume itself; a change read now may be from before.
                if let slept = ticker.sleepEnded(clock: clock) {
                    onResume(clock.now(), slept)
                    continue
                }
                if let signal, let event = advertisingReport(from: signal) {
                    onEvent(HCIEventPacket(bytes: event, time: clock.now()))
                }
                ticker.tickIfDue(clock: clock, onTick)
            } catch {
                failure = .bluez(adapter, error.description)
                break
            }
        }
        // Ends our discovery session only; bluetoothd keeps any other client's.
        _ = try? adapterCall("StopDiscovery")
        if let failure { throw failure }
    }

    public func cancel() { wakeup.signal() }

    private func adapterCall(_ method: String, _ arguments: [DBusArgument] = []) throws(DBusFailure) {
        try bus.call(
            destination: "org.bluez", path: adapterPath, interface: "org.bluez.Adapter1", method: method,
            arguments: arguments)
    }

    /// The LE Advertising Report event a device's new manufacturer data stands for, if the signal is one.
    private func advertisingReport(from signal: DBusSignal) -> [UInt8]? {
        let path: String
        let properties: DBusValue
        switch (signal.interface, signal.member) {
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            guard signal.arguments.count == 2, let object = signal.arguments[0].string,
                let device = signal.arguments[1]["org.bluez.Device1"]
            else { return nil }
            (path, properties) = (object, device)
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard signal.arguments.count >= 2, signal.arguments[0].string == "org.bluez.Device1" else { return nil }
            (path, properties) = (signal.path, signal.arguments[1])
        default:
            return nil
        }
        return advertisingReport(of: path, properties)
    }

    /// The report for a device whose `properties` (all, or those that changed) name manufacturer data.
    private func advertisingReport(of path: String, _ properties: DBusValue) -> [UInt8]? {
        guard path.hasPrefix(adapterPath + "/") else { return nil }
        // A device found before this scan began: its address is only in its properties.
        if devices[path] == nil, properties["Address"] == nil, let all = deviceProperties(path) { learn(all, of: path) }
        learn(properties, of: path)
        guard let device = devices[path], let manufacturer = properties["ManufacturerData"] else { return nil }
        let entries = manufacturer.integerKeyedEntries.compactMap { entry in entry.value.bytes.map { (entry.key, $0) } }
        return Self.advertisingReportEvent(
            address: device.address, randomAddress: device.randomAddress, rssi: device.rssi, manufacturerData: entries)
    }

    /// A bare LE Advertising Report event (one ADV_NONCONN_IND report) carrying `manufacturerData` as AD
    /// structures; nil when they do not fit a legacy advertisement's 31 bytes.
    static func advertisingReportEvent(
        address: [UInt8], randomAddress: Bool, rssi: Int8, manufacturerData: [(company: Int, payload: [UInt8])]
    ) -> [UInt8]? {
        var data: [UInt8] = []
        for (company, payload) in manufacturerData where payload.count <= 26 {
            data += [UInt8(payload.count + 3), 0xFF, UInt8(company & 0xFF), UInt8((company >> 8) & 0xFF)] + payload
        }
        guard !data.isEmpty, data.count <= 31, address.count == 6 else { return nil }
        let report = [0x02, 1, 0x03, randomAddress ? 1 : 0] + address + [UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
        return [0x3E, UInt8(report.count)] + report
    }

    private func learn(_ properties: DBusValue, of path: String) {
        devices.learn(
            address: properties["Address"]?.string.flatMap(Self.address),
            random: properties["AddressType"]?.string == "random",
            rssi: properties["RSSI"]?.integer.map { Int8(clamping: $0) }, of: path)
    }

    private func devicesHeardSoFar() -> [[UInt8]] {
        let objects = try? bus.call(
            destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager",
            method: "GetManagedObjects")
        guard case .dictionary(let entries)? = objects?.first else { return [] }
        return entries.compactMap { entry in
            guard let path = entry.key.string, let device = entry.value["org.bluez.Device1"], device["RSSI"] != nil
            else { return nil }
            return advertisingReport(of: path, device)
        }
    }

    private func deviceProperties(_ path: String) -> DBusValue? {
        try? bus.call(
            destination: "org.bluez", path: path, interface: "org.freedesktop.DBus.Properties", method: "GetAll",
            arguments: [.string("org.bluez.Device1")]
        ).first
    }

    /// "AA:BB:CC:DD:EE:FF" as HCI sends it: least significant byte first.
    static func address(_ text: String) -> [UInt8]? {
        let bytes = text.split(separator: ":").compactMap { UInt8($0, radix: 16) }
        return bytes.count == 6 ? bytes.reversed() : nil
    }
}

/// What the D-Bus path knows of each device object: its address and last RSSI, which its manufacturer data's
/// reports carry. Bounded as the Ranger is: with random private addresses a phone or a beacon becomes a new
/// object every few minutes (and made-up addresses cost a transmitter nothing), so past `limit` objects the one
/// heard longest ago is forgotten; heard again, it is asked for its address again.
struct BlueZDevices {
    struct Device {
        var address: [UInt8]
        var randomAddress: Bool
        /// 127 (HCI's "not available") until bluetoothd reports one.
        var rssi: Int8
        /// When it was last heard, in learning order.
        fileprivate var heard: UInt64
    }

    let limit: Int
    private var devices: [String: Device] = [:]
    private var heard: UInt64 = 0

    init(limit: Int = 2_000) { self.limit = max(1, limit) }

    var count: Int { devices.count }

    subscript(path: String) -> Device? { devices[path] }

    /// What a signal said of the object at `path` (its address, its RSSI; either may be absent): it was
    /// heard now. A new object past the limit displaces the one heard longest ago.
    mutating func learn(address: [UInt8]?, random: Bool, rssi: Int8?, of path: String) {
        heard += 1
        if let address {
            if devices[path] == nil, devices.count >= limit,
                let oldest = devices.min(by: { $0.value.heard < $1.value.heard })
            {
                devices[oldest.key] = nil
            }
            devices[path] = Device(address: address, randomAddress: random, rssi: devices[path]?.rssi ?? 127, heard: heard)
        }
        guard devices[path] != nil else { return }
        devices[path]!.heard = heard
        if let rssi { devices[path]!.rssi = rssi }
    }
}
