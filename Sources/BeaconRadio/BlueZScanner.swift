import Beacons
import DBus
import Foundation

/// Scanning through bluetoothd's D-Bus API, beside a bluetoothd that is discovering: a raw scan there would leave
/// bluetoothd's discovery dead. Where bluetoothd offers AdvertisementMonitorManager1 (BlueZ 5.66: `bluetoothd -E`)
/// the scan registers an advertisement monitor (BlueZMonitorApplication): the kernel then listens passively, also
/// after the other program's discovery ends, and bluetoothd reports the beacons the monitor's patterns match.
/// Else it joins the discovery as one more session (SetDiscoveryFilter, StartDiscovery, and a StopDiscovery that
/// ends only ours), which scans actively. Either way each reading becomes a bare LE Advertising Report event, so the
/// rest of the scan is the same. docs/RADIO.md says why this path and not another.
public final class BlueZScanner: LiveScanner, @unchecked Sendable {
    public enum Mode: String, Sendable {
        case advertisementMonitor = "advertisement monitor"
        case discovery
    }

    public let adapter: String
    public let mode: Mode
    public var path: String { "bluetoothd (\(mode.rawValue))" }
    private let bus: MessageBus
    private let adapterPath: String
    private let clock: any BeaconClock
    private let wakeup: WakeupPipe
    private var devices = BlueZDevices()
    private let application: BlueZMonitorApplication
    /// The monitor's calls (Activate, Release, DeviceFound, DeviceLost) in the order they came, not yet acted on.
    private var monitorCalls: [DBusMethodCall] = []
    /// With an RSSI filter: the devices bluetoothd found and has not lost, whose last reading each tick repeats.
    private var found: Set<String> = []

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

    /// Whether bluetoothd offers pattern monitors on `adapter` (org.bluez.AdvertisementMonitorManager1 with
    /// `or_patterns`: BlueZ 5.66 only with its experimental interfaces, `bluetoothd -E`).
    public static func bluetoothdOffersAdvertisementMonitors(adapter: String?) -> Bool {
        guard let bus = try? MessageBus.system(), bus.nameHasOwner("org.bluez") else { return false }
        return offersAdvertisementMonitors(bus, adapterPath: "/org/bluez/\(HCITransport.adapterName(adapter))")
    }

    static func offersAdvertisementMonitors(_ bus: MessageBus, adapterPath: String) -> Bool {
        let reply = try? bus.call(
            destination: "org.bluez", path: adapterPath, interface: "org.freedesktop.DBus.Properties", method: "Get",
            arguments: [.string(BlueZMonitorApplication.managerInterface), .string("SupportedMonitorTypes")])
        guard case .array(let types)? = reply?.first?.unwrapped else { return false }
        return types.contains(.string("or_patterns"))
    }

    /// `power` sets the monitor's RSSI filter; `uuids` its patterns (none: every iBeacon). Discovery ignores both.
    public init(
        adapter: String? = nil, power: ScanPower = .high, uuids: [UUID] = [],
        clock: any BeaconClock = MonotonicBeaconClock()
    ) throws(RadioError) {
        let name = HCITransport.adapterName(adapter)
        do { bus = try MessageBus.system() } catch { throw .bluez(name, error.description) }
        self.adapter = name
        adapterPath = "/org/bluez/\(name)"
        self.clock = clock
        wakeup = try WakeupPipe()
        application = BlueZMonitorApplication(power: power, uuids: uuids)
        mode = Self.offersAdvertisementMonitors(bus, adapterPath: adapterPath) ? .advertisementMonitor : .discovery
    }

    public func run(
        tickInterval: Double? = nil, onTick: (Double) -> Void = { _ in },
        onResume: (_ time: Double, _ slept: Double) -> Void = { _, _ in }, _ onEvent: (HCIEventPacket) -> Void
    ) throws(RadioError) {
        try bluez { () throws(DBusFailure) in
            try bus.addMatch(
                "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',"
                    + "member='PropertiesChanged',path_namespace='\(adapterPath)'")
            try bus.addMatch(
                "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.ObjectManager',member='InterfacesAdded'")
        }
        switch mode {
        case .discovery:
            try bluez { () throws(DBusFailure) in
                try adapterCall("SetDiscoveryFilter", [.properties([("Transport", .string("le")), ("DuplicateData", .bool(true))])])
            }
            // bluetoothd keeps a client's filter past its StopDiscovery, and when that client leaves the bus it stops
            // the adapter's whole discovery if exactly one other client discovers (src/adapter.c: discovery_disconnect
            // calls discovery_stop for a client of set_filter_list). An empty filter drops ours, and its watch.
            defer { _ = try? adapterCall("SetDiscoveryFilter", [.properties([])]) }
            try bluez { () throws(DBusFailure) in try adapterCall("StartDiscovery") }
            // Ends our discovery session only; bluetoothd keeps any other client's.
            defer { _ = try? adapterCall("StopDiscovery") }
            // What the running discovery heard before we joined: its duplicate filter may never report it again.
            // A device has an RSSI only while the current discovery has seen it.
            for event in devicesHeardSoFar() { onEvent(HCIEventPacket(bytes: event, time: clock.now())) }
            try listen(tickInterval: tickInterval, onTick: onTick, onResume: onResume, onEvent)
        case .advertisementMonitor:
            defer {
                _ = try? bus.call(
                    destination: "org.bluez", path: adapterPath, interface: BlueZMonitorApplication.managerInterface,
                    method: "UnregisterMonitor", arguments: [.objectPath(BlueZMonitorApplication.rootPath)])
                bus.unexport(path: BlueZMonitorApplication.monitorPath)
                bus.unexport(path: BlueZMonitorApplication.rootPath)
            }
            try registerMonitor()
            try listen(tickInterval: tickInterval, onTick: onTick, onResume: onResume, onEvent)
        }
    }

    /// Exports the application and registers it; returns once bluetoothd activated the monitor. Throws when it
    /// refuses the application or releases the monitor instead (patterns or RSSI filter refused, or the kernel's).
    private func registerMonitor() throws(RadioError) {
        let application = application
        try bluez { () throws(DBusFailure) in
            try bus.export(path: BlueZMonitorApplication.rootPath) { call in application.reply(to: call) }
            try bus.export(path: BlueZMonitorApplication.monitorPath) { [unowned self] call in
                guard call.interface == BlueZMonitorApplication.monitorInterface else { return application.reply(to: call) }
                monitorCalls.append(call)
                return .arguments([])
            }
        }
        try activateMonitor()
    }

    /// Registers the exported application and waits for bluetoothd to activate its monitor.
    private func activateMonitor() throws(RadioError) {
        monitorCalls.removeAll()
        try bluez { () throws(DBusFailure) in
            // bluetoothd reads the application (GetManagedObjects) before it answers.
            try bus.callDispatching(
                destination: "org.bluez", path: adapterPath, interface: BlueZMonitorApplication.managerInterface,
                method: "RegisterMonitor", arguments: [.objectPath(BlueZMonitorApplication.rootPath)])
        }
        // bluetoothd activates the monitor once the kernel took its patterns.
        let deadline = clock.now() + 10
        while !monitorCalls.contains(where: { $0.member == "Activate" || $0.member == "Release" }) {
            let remaining = deadline - clock.now()
            guard remaining > 0 else {
                throw .bluez(adapter, "bluetoothd did not activate the advertisement monitor within 10 s")
            }
            try bluez { () throws(DBusFailure) in
                _ = try bus.nextMessage(timeoutMilliseconds: Int32(remaining * 1000), wakeup: wakeup.readEnd)
            }
            if wakeup.isSignalled { return }
        }
        if monitorCalls.contains(where: { $0.member == "Release" }) {
            throw .bluez(
                adapter,
                "bluetoothd released the advertisement monitor (its patterns or RSSI filter refused): see bluetoothd's log")
        }
    }

    /// Reads bluetoothd's signals and the monitor's calls until cancelled, ticking in between.
    private func listen(
        tickInterval: Double?, onTick: (Double) -> Void, onResume: (_ time: Double, _ slept: Double) -> Void,
        _ onEvent: (HCIEventPacket) -> Void
    ) throws(RadioError) {
        var ticker = ScanTicker(interval: tickInterval, clock: clock)
        while true {
            let incoming: DBusIncoming?
            do throws(DBusFailure) {
                incoming = try bus.nextMessage(timeoutMilliseconds: ticker.waitMilliseconds(clock: clock), wakeup: wakeup.readEnd)
            } catch {
                throw .bluez(adapter, error.description)
            }
            if incoming == nil, wakeup.isSignalled { break }
            // bluetoothd restarts its scanning after a resume itself; a change read now may be from before.
            if let slept = ticker.sleepEnded(clock: clock) {
                monitorCalls.removeAll()
                found.removeAll()
                // bluetoothd still counts as found what it found before the sleep and would not say so again:
                // registered afresh, the monitor finds again what is still there.
                if mode == .advertisementMonitor {
                    _ = try? bus.call(
                        destination: "org.bluez", path: adapterPath, interface: BlueZMonitorApplication.managerInterface,
                        method: "UnregisterMonitor", arguments: [.objectPath(BlueZMonitorApplication.rootPath)])
                    // What came before the answer (the old monitor's Release among it) is from before the sleep.
                    while (try? bus.nextMessage(timeoutMilliseconds: 0, wakeup: wakeup.readEnd)) != nil {}
                    try activateMonitor()
                }
                onResume(clock.now(), slept)
                continue
            }
            if case .signal(let signal) = incoming, let event = advertisingReport(from: signal) {
                onEvent(HCIEventPacket(bytes: event, time: clock.now()))
            }
            for event in takeMonitorReadings() { onEvent(HCIEventPacket(bytes: event, time: clock.now())) }
            ticker.tickIfDue(clock: clock) { time in
                // A found beacon bluetoothd has not lost is still heard: its last reading, now.
                for path in found { if let event = devices.report(of: path) { onEvent(HCIEventPacket(bytes: event, time: time)) } }
                onTick(time)
            }
        }
    }

    /// The readings the monitor's calls stand for: each DeviceFound is one (bluetoothd calls it for every matching
    /// advertisement when the monitor has no RSSI filter, else once when it finds the device); DeviceLost ends a
    /// found device's repeated reading.
    private func takeMonitorReadings() -> [[UInt8]] {
        defer { monitorCalls.removeAll() }
        var events: [[UInt8]] = []
        for call in monitorCalls {
            guard let path = call.arguments.first?.string, path.hasPrefix(adapterPath + "/") else { continue }
            switch call.member {
            case "DeviceFound":
                if devices[path] == nil || devices.report(of: path) == nil, let all = deviceProperties(path) {
                    learn(all, of: path)
                }
                if application.rssi != nil { found.insert(path) }
                if let event = devices.report(of: path) { events.append(event) }
            case "DeviceLost":
                found.remove(path)
            default:
                continue
            }
        }
        return events
    }

    public func cancel() { wakeup.signal() }

    /// `body`'s D-Bus failure as this adapter's radio error.
    private func bluez<T>(_ body: () throws(DBusFailure) -> T) throws(RadioError) -> T {
        do { return try body() } catch {
            throw error.refusedByPolicy ? .busRefusesUser(error.message) : .bluez(adapter, error.description)
        }
    }

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

    /// The report for a device whose `properties` (all, or those that changed) name beacon data. Through a monitor,
    /// its calls are the readings: a change reports only for a device found and not lost (a beacon whose identity
    /// rotates), and otherwise only updates what the next DeviceFound reports.
    private func advertisingReport(of path: String, _ properties: DBusValue) -> [UInt8]? {
        guard path.hasPrefix(adapterPath + "/") else { return nil }
        // A device found before this scan began: its address is only in its properties.
        if devices[path] == nil, properties["Address"] == nil, let all = deviceProperties(path) { learn(all, of: path) }
        learn(properties, of: path)
        guard properties["ManufacturerData"] != nil || properties["ServiceData"] != nil else { return nil }
        if mode == .advertisementMonitor, !found.contains(path) { return nil }
        return devices.report(of: path)
    }

    /// A bare LE Advertising Report event (one ADV_NONCONN_IND report) carrying `data`; nil when it is empty or
    /// does not fit a legacy advertisement's 31 bytes.
    static func advertisingReportEvent(address: [UInt8], randomAddress: Bool, rssi: Int8, data: [UInt8]) -> [UInt8]? {
        guard !data.isEmpty, data.count <= 31, address.count == 6 else { return nil }
        let report = [0x02, 1, 0x03, randomAddress ? 1 : 0] + address + [UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
        return [0x3E, UInt8(report.count)] + report
    }

    /// Device1's ManufacturerData (`a{qv}`) and ServiceData (`a{sv}`, keyed by 128-bit UUID text) as AD structures:
    /// manufacturer specific data, and service data of the 16-bit UUIDs (Eddystone's FEAA) of the Bluetooth base.
    static func advertisingData(manufacturerData: DBusValue?, serviceData: DBusValue?) -> [UInt8] {
        var data: [UInt8] = []
        for entry in manufacturerData?.integerKeyedEntries ?? [] {
            guard let payload = entry.value.bytes, payload.count <= 26 else { continue }
            let company = entry.key
            data += [UInt8(payload.count + 3), 0xFF, UInt8(company & 0xFF), UInt8((company >> 8) & 0xFF)] + payload
        }
        if case .dictionary(let entries)? = serviceData?.unwrapped {
            for entry in entries {
                guard let text = entry.key.string, let uuid = shortUUID(text), let payload = entry.value.bytes,
                    payload.count <= 26
                else { continue }
                data += [UInt8(payload.count + 3), 0x16, UInt8(uuid & 0xFF), UInt8(uuid >> 8)] + payload
            }
        }
        return data
    }

    /// The 16-bit UUID `0000XXXX-0000-1000-8000-00805f9b34fb` stands for; nil for any other.
    static func shortUUID(_ text: String) -> UInt16? {
        let lowered = text.lowercased()
        guard lowered.count == 36, lowered.hasPrefix("0000"), lowered.hasSuffix("-0000-1000-8000-00805f9b34fb") else { return nil }
        return UInt16(lowered.dropFirst(4).prefix(4), radix: 16)
    }

    private func learn(_ properties: DBusValue, of path: String) {
        devices.learn(
            address: properties["Address"]?.string.flatMap(Self.address),
            random: properties["AddressType"]?.string == "random",
            rssi: properties["RSSI"]?.integer.map { Int8(clamping: $0) },
            manufacturerData: properties["ManufacturerData"].map { Self.advertisingData(manufacturerData: $0, serviceData: nil) },
            serviceData: properties["ServiceData"].map { Self.advertisingData(manufacturerData: nil, serviceData: $0) }, of: path)
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
        /// Its manufacturer and service data as AD structures, as bluetoothd last reported each.
        var manufacturerData: [UInt8] = []
        var serviceData: [UInt8] = []
        /// When it was last heard, in learning order.
        fileprivate var heard: UInt64
    }

    let limit: Int
    private var devices: [String: Device] = [:]
    private var heard: UInt64 = 0

    init(limit: Int = 2_000) { self.limit = max(1, limit) }

    var count: Int { devices.count }

    subscript(path: String) -> Device? { devices[path] }

    /// The LE Advertising Report event of the object at `path` as last reported; nil without beacon data.
    func report(of path: String) -> [UInt8]? {
        guard let device = devices[path] else { return nil }
        return BlueZScanner.advertisingReportEvent(
            address: device.address, randomAddress: device.randomAddress, rssi: device.rssi,
            data: device.manufacturerData + device.serviceData)
    }

    /// What a signal said of the object at `path` (its address, its RSSI, its beacon data; any may be absent): it
    /// was heard now. A new object past the limit displaces the one heard longest ago.
    mutating func learn(
        address: [UInt8]?, random: Bool, rssi: Int8?, manufacturerData: [UInt8]? = nil, serviceData: [UInt8]? = nil,
        of path: String
    ) {
        heard += 1
        if let address {
            if devices[path] == nil, devices.count >= limit,
                let oldest = devices.min(by: { $0.value.heard < $1.value.heard })
            {
                devices[oldest.key] = nil
            }
            var device = devices[path] ?? Device(address: address, randomAddress: random, rssi: 127, heard: heard)
            device.address = address
            device.randomAddress = random
            devices[path] = device
        }
        guard devices[path] != nil else { return }
        devices[path]!.heard = heard
        if let rssi { devices[path]!.rssi = rssi }
        if let manufacturerData { devices[path]!.manufacturerData = manufacturerData }
        if let serviceData { devices[path]!.serviceData = serviceData }
    }
}
