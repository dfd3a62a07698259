import Beacons
import DBus
import Foundation
import LoyaltyTesting
import Testing

@testable import BeaconRadio

/// What the bluetoothd path sends over D-Bus, read back through a private bus (a real dbus-daemon) by a
/// second connection as bluetoothd would read it, and its errors when bluetoothd cannot be reached. (The
/// path itself runs against bluetoothd in LiveRadioTests.)
@Suite struct BlueZAdvertiserTests {
    static let frame = BeaconFrame(
        kind: .iBeacon,
        identity: BeaconIdentity(uuid: UUID(uuidString: "8F0C1DDC-11E5-4A07-8910-425941B072F9")!, major: 1, minor: 2),
        measuredPower: -61)

    @Test func theAdvertisementsPropertiesArriveInBlueZsTypes() throws {
        let bus = try PrivateBus()
        let advertisement = try BeaconAdvertisement(frame: Self.frame, intervalMilliseconds: 152.5)
        let object = try ExportedOnThread(address: bus.address) { call in
            BlueZAdvertiser.reply(to: call, properties: BlueZAdvertiser.properties(of: Self.frame, advertisement))
        }
        defer { object.stop() }
        let caller = try MessageBus(address: bus.address)
        func call(_ method: String, _ arguments: [DBusArgument]) throws(DBusFailure) -> [DBusValue] {
            try caller.call(
                destination: object.uniqueName, path: BlueZAdvertiser.objectPath,
                interface: "org.freedesktop.DBus.Properties", method: method, arguments: arguments)
        }
        let all = try #require(try call("GetAll", [.string("org.bluez.LEAdvertisement1")]).first)
        guard case .dictionary(let entries) = all else { Issue.record("not a{sv}: \(all)"); return }
        #expect(entries.compactMap(\.key.string) == ["Type", "ManufacturerData", "MinInterval", "MaxInterval"])
        #expect(all["Type"] == .variant(.string("broadcast")))
        // 152.5 ms is sent as whole milliseconds, a uint32 (BlueZ reads MinInterval with that type only).
        #expect(all["MinInterval"] == .variant(.uint32(153)) && all["MaxInterval"] == .variant(.uint32(153)))
        let manufacturer = try #require(all["ManufacturerData"])
        guard case .dictionary(let companies) = manufacturer.unwrapped, companies.count == 1 else {
            Issue.record("not a{qv}: \(manufacturer)")
            return
        }
        #expect(companies[0].key == .uint16(0x004C))
        let payload: [UInt8] =
            [0x02, 0x15, 0x8F, 0x0C, 0x1D, 0xDC, 0x11, 0xE5, 0x4A, 0x07, 0x89, 0x10, 0x42, 0x59, 0x41, 0xB0, 0x72, 0xF9]
            + [0x00, 0x01, 0x00, 0x02, 0xC3]
        #expect(companies[0].value.bytes == payload)

        let one = try call("Get", [.string("org.bluez.LEAdvertisement1"), .string("Type")])
        #expect(one == [.variant(.string("broadcast"))])
        // bluetoothd writes back the TX power the controller chose: accepted.
        #expect(try call("Set", [.string("org.bluez.LEAdvertisement1"), .string("TxPower"), .variant(.int16(0))]) == [])
        #expect(try call("GetAll", [.string("org.bluez.Device1")]).first == .dictionary([]))
        #expect(throws: DBusFailure.self) { try call("Get", [.string("org.bluez.LEAdvertisement1"), .string("Name")]) }
        do {
            try caller.call(
                destination: object.uniqueName, path: BlueZAdvertiser.objectPath,
                interface: "org.freedesktop.DBus.ObjectManager", method: "GetManagedObjects")
            Issue.record("GetManagedObjects answered")
        } catch {
            #expect(error.name == "org.freedesktop.DBus.Error.UnknownMethod")
        }
    }

    @Test func noBusIsAClearErrorThatExits69() throws {
        let advertisement = try BeaconAdvertisement(frame: Self.frame)
        do {
            _ = try BlueZAdvertiser(adapter: "hci0", advertisement: advertisement, busAddress: "unix:path=/nonexistent/bus")
            Issue.record("connected to a bus that is not there")
        } catch {
            guard case .bluezAdvertising("hci0", _, _) = error else { Issue.record("\(error)"); return }
            #expect(error.description.hasPrefix("bluetoothd could not advertise on hci0: org.freedesktop.DBus.Error."))
        }
    }

    @Test func aBusWithoutBluetoothdIsAClearErrorThatExits69() throws {
        let bus = try PrivateBus()
        let advertiser = try BlueZAdvertiser(
            adapter: "hci1", advertisement: try BeaconAdvertisement(frame: Self.frame), busAddress: bus.address)
        do {
            try advertiser.run(duration: 0.1)
            Issue.record("advertised without bluetoothd")
        } catch {
            #expect(error == .bluezAdvertising("hci1", "org.freedesktop.DBus.Error.ServiceUnknown", error.message))
            #expect(error.description.contains("bluetoothd could not advertise on hci1"), "\(error)")
        }
    }

    /// libdbus aborts the process on a malformed path or name; the wrapper refuses it first, as a D-Bus error.
    @Test func aMalformedPathOrNameIsAnErrorNotAnAbort() throws {
        let bus = try PrivateBus()
        let caller = try MessageBus(address: bus.address)
        let good = ("org.bluez", "/org/bluez/hci0", "org.freedesktop.DBus.Properties", "Get")
        let malformed = [
            ("org..bluez", good.1, good.2, good.3), (good.0, "/org/bluez/hci 0", good.2, good.3),
            (good.0, "/org/bluez/hci-0", good.2, good.3), (good.0, "/org/bluez/", good.2, good.3),
            (good.0, "", good.2, good.3), (good.0, good.1, "Properties", good.3), (good.0, good.1, good.2, "Get.All"),
        ]
        for (destination, path, interface, method) in malformed {
            do {
                try caller.call(destination: destination, path: path, interface: interface, method: method)
                Issue.record("called \(destination) \(path) \(interface).\(method)")
            } catch {
                #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs", "\(error)")
                #expect(!error.message.isEmpty)
            }
        }
        #expect(throws: DBusFailure.self) {
            try caller.call(
                destination: good.0, path: good.1, interface: good.2, method: good.3, arguments: [.objectPath("x/y")])
        }
        // The adapter's path is built from its name: a malformed one is bluetoothd's error, exit 69.
        let advertiser = try BlueZAdvertiser(
            adapter: "hci 0", advertisement: try BeaconAdvertisement(frame: Self.frame), busAddress: bus.address)
        #expect(throws: RadioError.bluezAdvertising("hci 0", "org.freedesktop.DBus.Error.InvalidArgs", "Object path was not valid: '/org/bluez/hci 0'")) {
            try advertiser.run(duration: 0.1)
        }
    }

    /// Eddystone's data changes while it advertises, which a registered advertisement cannot: refused before the
    /// bus is touched (no bus at this address), with the ways round it; exit 69.
    @Test func eddystoneIsRefusedWithWhatToDo() throws {
        let uid = try #require(EddystoneUID(parsing: "00112233445566778899:AABBCCDDEEFF"))
        let advertisement = try BeaconAdvertisement(.eddystone(EddystoneBroadcast(beacon: .uid(uid), measuredPower: -59)))
        #expect(throws: RadioError.changingDataThroughBluetoothd("hci0")) {
            try BlueZAdvertiser(adapter: "hci0", advertisement: advertisement, busAddress: "unix:path=/nonexistent/bus")
        }
        let message = RadioError.changingDataThroughBluetoothd("hci0").description
        #expect(message.contains("raw HCI") && message.contains("systemctl stop bluetooth") && message.contains("--hci"))
    }

    /// A bus whose policy keeps this user from bluetoothd (outside the bluetooth group): 77 and what to do,
    /// never a raw-HCI fallback that would undo bluetoothd's advertising.
    @Test func aBusThatRefusesThisUserIs77() throws {
        let bus = try PrivateBus(refusing: "org.bluez")
        let bluetoothd = try bus.own("org.bluez")
        let advertiser = try BlueZAdvertiser(
            adapter: "hci0", advertisement: try BeaconAdvertisement(frame: Self.frame), busAddress: bus.address)
        do {
            try advertiser.run(duration: 0.1)
            Issue.record("advertised through a bus that refuses this user")
        } catch {
            guard case .busRefusesUser(let message) = error else { Issue.record("\(error)"); return }
            #expect(message.contains("Rejected send message"), "\(message)")
        }
        withExtendedLifetime(bluetoothd) {}
    }

    @Test func bluetoothdsRefusalsSayWhatToDo() {
        let full = RadioError.bluezAdvertising("hci0", "org.bluez.Error.NotPermitted", "Maximum advertisements reached")
        #expect(full.description.contains("no free advertising instance on hci0 (Maximum advertisements reached)"))
        let denied = RadioError.busRefusesUser("Rejected send message")
        #expect(denied.description.contains("the `bluetooth` group"))
        #expect(RadioError.advertisementReleased("hci0").description.hasPrefix("bluetoothd withdrew the advertisement on hci0"))
    }
}

extension RadioError {
    /// The D-Bus message of a `.bluezAdvertising` error ("" for others).
    fileprivate var message: String {
        if case .bluezAdvertising(_, _, let message) = self { return message }
        return ""
    }
}

/// An object exported on its own connection, dispatched on a thread of its own until `stop()`.
final class ExportedOnThread: @unchecked Sendable {
    private(set) var uniqueName = ""
    private let ready = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let stopPipe: [Int32]

    init(
        address: String, paths: [String] = [BlueZAdvertiser.objectPath],
        _ handler: @escaping @Sendable (DBusMethodCall) -> DBusMethodReply
    ) throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        stopPipe = ends
        Thread.detachNewThread { [self] in
            defer { done.signal() }
            guard let bus = try? MessageBus(address: address),
                paths.allSatisfy({ (try? bus.export(path: $0, handler)) != nil })
            else {
                ready.signal()
                return
            }
            uniqueName = bus.uniqueName
            ready.signal()
            var polled = pollfd(fd: stopPipe[0], events: Int16(POLLIN), revents: 0)
            while poll(&polled, 1, 0) == 0 {
                _ = try? bus.dispatch(timeoutMilliseconds: 1000, wakeup: stopPipe[0])
            }
        }
        ready.wait()
        try #require(!uniqueName.isEmpty, "the object could not be exported")
    }

    func stop() {
        var byte: UInt8 = 1
        _ = write(stopPipe[1], &byte, 1)
        done.wait()
        close(stopPipe[0])
        close(stopPipe[1])
    }
}
