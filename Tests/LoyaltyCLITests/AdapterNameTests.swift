import Foundation
import LoyaltyTesting
import Testing

/// `--adapter` takes `hci` and ASCII digits in every command that has it, refused as a usage error when the
/// command line is parsed, before the command touches the terminal, the radio or the bus: with bluetoothd
/// running, a name such as `hci 0` made a malformed D-Bus path, on which libdbus aborts the process.
@Suite struct AdapterNameTests {
    static let beacon = "8F0C1DDC-11E5-4A07-8910-425941B072F9"

    @Test(arguments: LoyaltyRun.allCases, ["hci 0", "hci-0", "", "hci\u{663}", "hci", "eth0"])
    func everyCommandRefusesAMalformedAdapterName(_ run: LoyaltyRun, _ name: String) throws {
        let commands: [[String]] = [
            ["scan"], ["scan", "--replay", "/nonexistent/walk.btsnoop"], ["doctor"], ["doctor", "--json"],
            ["beacon", "calibrate", "\(Self.beacon):1:1", "--seconds", "1"],
            ["beacon", "advertise", "--uuid", Self.beacon, "--major", "1", "--minor", "2", "--duration", "0.1"],
        ]
        for command in commands {
            let result = try run(command + ["--adapter", name])
            #expect(result.status == 64, "\(command) --adapter '\(name)': \(result.status) \(result.stderr)")
            #expect(
                result.stderr.hasPrefix("error: --adapter: expected an adapter name: hci and a number, like hci0\n"),
                "\(command): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(command): \(result.stdout)")
        }
    }
}
