import Beacons
import DBus
import Foundation

/// An iBeacon advertised through bluetoothd's D-Bus API (org.bluez.LEAdvertisingManager1), beside a bluetoothd
/// that manages the adapter: registered as one more advertisement (an exported LEAdvertisement1 of Type
/// "broadcast"), so raw commands never overwrite other programs' advertising; unregistering removes only ours.
/// docs/RADIO.md says why, and what the advertisement holds.
public final class BlueZAdvertiser: LiveAdvertiser, @unchecked Sendable {
    public let adapter: String
    public var via: String { "bluetoothd" }
    public var commandSet: String? { nil }
    public var intervalMilliseconds: Double { Double(Self.wholeMilliseconds(advertisement)) }
    public let advertisement: BeaconAdvertisement
    private let frame: BeaconFrame
    private let bus: MessageBus
    private let adapterPath: String
    private let wakeup: WakeupPipe
    /// Set when bluetoothd calls Release: the advertisement is gone (adapter removed, bluetoothd stopping).
    private var released = false

    /// The object path of the advertisement: one per connection, which BlueZ tells apart by its unique name.
    static let objectPath = "/loyalty/beacon"
    static let advertisementInterface = "org.bluez.LEAdvertisement1"
    static let managerInterface = "org.bluez.LEAdvertisingManager1"

    /// When bluetoothd manages `adapter` (hci0 by default) and offers LEAdvertisingManager1 there: its
    /// ActiveInstances and SupportedInstances (free ones); nil when no bluetoothd runs or it offers none there.
    /// Throws when bluetoothd runs but the bus refuses this user: raw HCI would overwrite its advertising.
    public static func bluetoothdManages(adapter: String?) throws(RadioError) -> (active: Int, free: Int)? {
        let name = HCITransport.adapterName(adapter)
        guard let bus = try? MessageBus.system(), bus.nameHasOwner("org.bluez") else { return nil }
        let reply: [DBusValue]
        do {
            reply = try bus.call(
                destination: "org.bluez", path: "/org/bluez/\(name)", interface: "org.freedesktop.DBus.Properties",
                method: "GetAll", arguments: [.string(managerInterface)])
        } catch {
            if error.refusedByPolicy { throw .busRefusesUser(error.message) }
            return nil
        }
        guard let properties = reply.first, let active = properties["ActiveInstances"]?.integer,
            let free = properties["SupportedInstances"]?.integer
        else { return nil }
        return (active, free)
    }

    /// Connects to the system bus (or the bus at `busAddress`) for `adapter` (hci0 by default).
    public init(adapter: String? = nil, advertisement: BeaconAdvertisement, busAddress: String? = nil)
        throws(RadioError)
    {
        let name = HCITransport.adapterName(adapter)
        // A registered advertisement's data is fixed, and Eddystone's (EID, TLM) and a secure iBeacon's change.
        guard case .iBeacon(let frame) = advertisement.content else { throw .changingDataThroughBluetoothd(name) }
        self.frame = frame
        do { bus = try MessageBus(address: busAddress) } catch {
            throw .bluezAdvertising(name, error.name, error.message)
        }
        self.adapter = name
        adapterPath = "/org/bluez/\(name)"
        self.advertisement = advertisement
        wakeup = try WakeupPipe()
    }

    /// The interval as BlueZ takes it: whole milliseconds.
    static func wholeMilliseconds(_ advertisement: BeaconAdvertisement) -> UInt32 {
        UInt32(advertisement.intervalMilliseconds.rounded())
    }

    /// LEAdvertisement1's properties for `frame` advertised as `advertisement`, as GetAll answers them.
    static func properties(of frame: BeaconFrame, _ advertisement: BeaconAdvertisement)
        -> [(String, DBusPropertyValue)]
    {
        let milliseconds = DBusPropertyValue.uint32(wholeMilliseconds(advertisement))
        return [
            ("Type", .string("broadcast")),
            (
                "ManufacturerData",
                .bytesByCompany([(BeaconFrame.appleCompanyID, iBeaconPayload(frame))])
            ),
            ("MinInterval", milliseconds), ("MaxInterval", milliseconds),
        ]
    }

    /// The manufacturer data after the company identifier (the AD structure's length, type and company
    /// dropped): 02 15, UUID, major, minor, measured power.
    static func iBeaconPayload(_ frame: BeaconFrame) -> [UInt8] {
        Array(AdvertisingData.beacon(frame, flags: nil).dropFirst(4))
    }

    /// Registers the advertisement and keeps it registered until `cancel()` or `duration` seconds (nil: until
    /// cancelled), then unregisters it. Throws when bluetoothd refuses it, withdraws it (Release) or goes away.
    public func run(duration: Double? = nil) throws(RadioError) {
        let powered = try bluez { () throws(DBusFailure) in
            try bus.call(
                destination: "org.bluez", path: adapterPath, interface: "org.freedesktop.DBus.Properties",
                method: "Get",
                arguments: [.string("org.bluez.Adapter1"), .string("Powered")])
        }
        guard powered.first?.unwrapped == .bool(true) else { throw .adapterDown(adapter) }
        let properties = Self.properties(of: frame, advertisement)
        try bluez { () throws(DBusFailure) in
            // bluetoothd gone without a Release (killed): its name loses its owner.
            try bus.addMatch(
                "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='org.bluez'")
            try bus.export(path: Self.objectPath) { [unowned self] call in
                if call.member == "Release", call.interface == Self.advertisementInterface {
                    released = true
                    wakeup.signal()
                    return .arguments([])
                }
                return Self.reply(to: call, properties: properties)
            }
        }
        defer { bus.unexport(path: Self.objectPath) }
        try bluez { () throws(DBusFailure) in
            try managerCall("RegisterAdvertisement", [.objectPath(Self.objectPath), .properties([])])
        }
        // The bluetoothd that holds the registration: one restarted in the meantime (a new owner) has none.
        let registrar = bus.nameOwner("org.bluez")
        try wakeup.waitOut(duration) { timeout throws(RadioError) in
            let came = try bluez { () throws(DBusFailure) in
                try bus.dispatch(timeoutMilliseconds: timeout, wakeup: wakeup.readEnd)
            }
            if came, !released, registrar == nil || bus.nameOwner("org.bluez") != registrar {
                throw .bluezAdvertising(
                    adapter, "org.freedesktop.DBus.Error.NameHasNoOwner",
                    "bluetoothd left the system bus or restarted, and the advertisement with it")
            }
        }
        if released { throw .advertisementReleased(adapter) }
        try bluez { () throws(DBusFailure) in
            try managerCall("UnregisterAdvertisement", [.objectPath(Self.objectPath)])
        }
    }

    public func cancel() { wakeup.signal() }

    /// The answer to a call to the advertisement object other than Release: its properties (GetAll, Get), and
    /// success for the TxPower bluetoothd writes back after registering (the controller's choice; unused here).
    static func reply(to call: DBusMethodCall, properties: [(String, DBusPropertyValue)])
        -> DBusMethodReply
    {
        let properties = call.arguments.first?.string == advertisementInterface ? properties : []
        let name = call.arguments.count > 1 ? call.arguments[1].string : nil
        switch (call.interface, call.member) {
        case ("org.freedesktop.DBus.Properties", "GetAll"):
            return .arguments([.properties(properties)])
        case ("org.freedesktop.DBus.Properties", "Get"):
            guard let value = properties.first(where: { $0.0 == name })?.1 else {
                return .error(
                    name: "org.freedesktop.DBus.Error.InvalidArgs", message: "no property \(name ?? "")")
            }
            return .arguments([.variant(value)])
        case ("org.freedesktop.DBus.Properties", "Set") where name == "TxPower":
            return .arguments([])
        default:
            return .error(
                name: "org.freedesktop.DBus.Error.UnknownMethod",
                message: "\(call.interface).\(call.member) is not offered by \(call.path)")
        }
    }

    private func managerCall(_ method: String, _ arguments: [DBusArgument]) throws(DBusFailure) {
        try bus.callDispatching(
            destination: "org.bluez", path: adapterPath, interface: Self.managerInterface, method: method,
            arguments: arguments)
    }

    /// `body`'s D-Bus failure as this adapter's radio error.
    private func bluez<T>(_ body: () throws(DBusFailure) -> T) throws(RadioError) -> T {
        do { return try body() } catch {
            throw error.refusedByPolicy ? .busRefusesUser(error.message) : .bluezAdvertising(adapter, error.name, error.message)
        }
    }
}

extension DBusFailure {
    /// The bus's policy refused the call, not bluetoothd: this user may not reach bluetoothd at all.
    var refusedByPolicy: Bool { name == "org.freedesktop.DBus.Error.AccessDenied" }
}
