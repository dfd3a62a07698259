import Foundation
import LoyaltyTesting
import Testing

/// bluetoothd runs, but the system bus's policy keeps this user from it (not in the bluetooth group): a live
/// scan cannot tell whether bluetoothd is discovering, and a raw-HCI scan would end that discovery, so it
/// ends with 77 saying what to do. (The bus is a real dbus-daemon with that policy, a
/// connection owning org.bluez; without the refusal the scan would go on to raw HCI, which this kernel lacks: 69.)
@Suite struct BusPolicyTests {
    @Test func aBusThatRefusesThisUserEndsALiveScanWith77() throws {
        let bus = try PrivateBus(refusing: "org.bluez")
        let bluetoothd = try bus.own("org.bluez")
        defer { withExtendedLifetime(bluetoothd) {} }
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("home-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = [
            "DBUS_SYSTEM_BUS_ADDRESS": bus.address, "LOYALTY_HOME": home.path, "LOYALTY_SERVER": "http://127.0.0.1:9",
        ]
        let scan = try Binary("loyalty").run(["scan", "--offline", "--json"], environment: environment, timeout: 30)
        #expect(scan.status == 77, "\(scan.status) \(scan.stderr)")
        #expect(scan.stderr.contains("does not let this user reach bluetoothd"), "\(scan.stderr)")
        #expect(scan.stderr.contains("`bluetooth` group"), "\(scan.stderr)")

    }
}
