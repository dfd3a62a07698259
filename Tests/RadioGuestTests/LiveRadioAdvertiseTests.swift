import Foundation
import LoyaltyTesting
import Testing

/// `beacon advertise` beside bluetoothd, in the same guest as LiveRadioTests (one suite, so one boot).
extension LiveRadioTests {
    /// With bluetoothd managing hci0 and another program's advertisement registered (bluetoothctl's), ours
    /// goes through LEAdvertisingManager1: the peer hears our iBeacon structure byte-exact beside the other
    /// one, and afterwards the other advertisement is still on the air and registered, ours gone. On a legacy
    /// controller the kernel takes turns with the two (raw HCI would have left the other off for good).
    @Test(.enabled(if: Self.full, "make check"))
    func besideBluetoothdAdvertisingIsOneMoreInstanceAndTheOthersStay() throws {
        try advertiseBesideBluetoothd(extended: false)
    }

    /// The same where the kernel gives each advertisement its own advertising set.
    @Test(.enabled(if: Self.full, "make check"))
    func besideBluetoothdAdvertisingTakesItsOwnSetOnAnExtendedController() throws {
        try advertiseBesideBluetoothd(extended: true)
    }

    private func advertiseBesideBluetoothd(extended: Bool, test: String = #function) throws {
        guard let guest = guest(test) else { return }
        try startBluetoothd(guest, extended: extended)
        defer { try? stopBluetoothd(guest) }
        // The other program: bluetoothctl keeps its broadcast advertisement registered while it runs (in a
        // session of its own, ended as a group).
        try guest.startInBackground(
            "exec setsid bash -c \"(printf 'menu advertise\\nmanufacturer 0xffff 0xaa 0xbb 0xcc\\nback\\nadvertise broadcast\\n'; "
                + "sleep 120) | bluetoothctl\"", name: "other-advertiser")
        defer { _ = try? guest.run("kill -- -$(cat \(guest.resultsPath)/other-advertiser.pid)") }
        let other: [UInt8] = [0x06, 0xFF, 0xFF, 0xFF, 0xAA, 0xBB, 0xCC]
        #expect(try waitUntil(seconds: 20) { try activeInstances(guest) == 1 }, "bluetoothctl's advertisement was not registered")
        let doctor = try guest.run(shell("doctor --json"))
        #expect(field(doctor, "advertise-path", "detail").contains("LEAdvertisingManager1"), "\(doctor.stdout)")

        let since = try guest.peer.heard().next
        let advertised = try guest.run(
            shell("beacon advertise --uuid \(Self.matey) --major 3 --minor 7 --measured-power -61 --duration 3 --json"),
            timeout: 60)
        #expect(advertised.status == 0, "\(advertised.stdout)\(advertised.stderr)")
        let lines = advertised.jsonLines
        #expect(lines.first?["via"] as? String == "bluetoothd" && lines.first?["commands"] is NSNull, "\(lines)")
        #expect(lines.last?["event"] as? String == "stopped")
        let during = try guest.peer.heard(since: since)
        // Ours: the iBeacon structure byte-exact; the kernel may put a Flags structure before it.
        let ibeacon = Array(Self.iBeacon(major: 3, minor: 7, power: -61).dropFirst(3))
        let ours = during.pdus.filter { Self.structures($0.data).contains(ibeacon) }
        #expect(!ours.isEmpty, "\(during.pdus.suffix(4))")
        #expect(ours.allSatisfy { Self.structures($0.data).allSatisfy { $0 == ibeacon || $0[1] == 0x01 } })
        #expect(during.pdus.contains { Self.structures($0.data).contains(other) }, "the other advertisement stopped")

        // Afterwards: ours unregistered, the other still registered and heard.
        #expect(try activeInstances(guest) == 1)
        sleep(1)
        let mark = try guest.peer.heard().next
        sleep(2)
        let later = try guest.peer.heard(since: mark).pdus
        #expect(later.contains { Self.structures($0.data).contains(other) }, "bluetoothctl's advertisement went off")
        #expect(!later.contains { Self.structures($0.data).contains(ibeacon) }, "ours stayed on")

        // bluetoothd stopping under a running advertisement ends it with an error, not silence.
        try guest.startInBackground(shell("beacon advertise --uuid \(Self.matey) --major 3 --minor 8") + "; echo exit=$? >&2", name: "orphaned")
        let started = try waitForLine(guest, "orphaned", containing: "through bluetoothd", seconds: 30)
        try stopBluetoothd(guest)
        let orphaned = try guest.background("orphaned", timeout: 30)
        #expect(started, "\(orphaned.stdout)\(orphaned.stderr)")
        #expect(orphaned.stderr.contains("exit=69") && orphaned.stderr.contains("bluetoothd"), "\(orphaned.stderr)")
    }

    /// bluetoothd killed (no Release sent) and restarted while the advertise process could not see it go
    /// (stopped): on waking it finds org.bluez owned again, but by a bluetoothd that never had its
    /// advertisement, and says so (exit 69).
    @Test(.enabled(if: Self.full, "make check"))
    func aBluetoothdRestartedUnderTheAdvertisementEndsIt() throws {
        guard let guest = guest() else { return }
        try startBluetoothd(guest)
        defer { try? stopBluetoothd(guest) }
        try guest.startInBackground(
            shell("beacon advertise --uuid \(Self.matey) --major 3 --minor 9") + "; echo exit=$? >&2", name: "restarted")
        try #require(try waitForLine(guest, "restarted", containing: "through bluetoothd", seconds: 30))
        // The background shell's child is `loyalty` (env executes it).
        let advertiser = "-P $(cat \(guest.resultsPath)/restarted.pid)"
        #expect(try guest.run("pkill -STOP \(advertiser)").status == 0)
        #expect(try guest.run("kill -KILL $(pidof bluetoothd)").status == 0)
        try stopBluetoothd(guest)  // waits until it is gone
        try startBluetoothd(guest)
        #expect(try guest.run("pkill -CONT \(advertiser)").status == 0)
        let ended = try guest.background("restarted", timeout: 30)
        #expect(ended.stderr.contains("exit=69") && ended.stderr.contains("restarted"), "\(ended.stderr)")
    }

    /// bluetoothd's LEAdvertisingManager1 ActiveInstances on hci0, nil when it cannot be read.
    private func activeInstances(_ guest: GuestRadio) throws -> Int? {
        let shown = try guest.run(
            "busctl get-property org.bluez /org/bluez/hci0 org.bluez.LEAdvertisingManager1 ActiveInstances")
        return shown.stdout.split(separator: " ").last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// The AD structures of advertising data, each with its length byte.
    static func structures(_ data: [UInt8]) -> [[UInt8]] {
        var structures: [[UInt8]] = []
        var index = 0
        while index < data.count, data[index] > 0, index + Int(data[index]) < data.count {
            structures.append(Array(data[index...(index + Int(data[index]))]))
            index += Int(data[index]) + 1
        }
        return structures
    }
}
