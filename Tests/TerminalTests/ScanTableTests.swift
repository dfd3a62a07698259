import Foundation
import Geofencing
import LoyaltyTesting
import Testing

/// `loyalty scan` on a terminal, run under script(1) so that its standard output is one: the live table
/// is redrawn in place, and the region events printed above it stay there.
@Suite struct ScanTableTests {
    @Test func storeAndBeaconEventsStayAboveTheRedrawnTable() throws {
        let server = try StoryServer.shared.get()
        let uuid = UUID().uuidString
        let retailer = try server.retailer("Matey's West End", uuid: uuid)
        let store = GeoCoordinate(latitude: 51.5136, longitude: -0.1365)
        try retailer.ok([
            "retailer", "store", "set", "carnaby", "--name", "Matey's Carnaby", "--lat", "\(store.latitude)",
            "--lon", "\(store.longitude)", "--radius-m", "100",
        ])
        let shopper = try server.newAccount()
        try shopper.ok(["sync", "--all"])

        // A beacon without an offer heard for two minutes (no offer waits for a key at the end), and a
        // walk into the store and out again during the first 80 seconds, from the capture's start.
        let capture = try server.walk(["\(uuid):9:9@0=15,120=15"])
        let approach: [Double] = (0..<30).map { 700 - Double($0) * 20 }
        let leave: [Double] = (0..<30).map { 160 + Double($0) * 20 }
        let distances = approach + Array(repeating: 20, count: 20) + leave
        let fixes = distances.enumerated().flatMap { second, metres in
            let fix = GeoFix(
                time: 1_700_000_000 + Double(second),
                coordinate: GeoCoordinate(
                    latitude: store.latitude + metres / GreatCircle.earthRadius * 180 / .pi, longitude: store.longitude))
            return [NMEAWriter.rmc(fix), NMEAWriter.gga(fix)]
        }
        let log = server.work.appendingPathComponent("walk-\(UUID().uuidString).nmea")
        try (fixes.joined(separator: "\r\n") + "\r\n").write(to: log, atomically: true, encoding: .utf8)

        let scan = [
            Binary("loyalty").url.path, "scan", "--replay", capture.path, "--location", "nmea:\(log.path)",
            "--exit-delay", "5", "--offline",
        ]
        let terminal = try Binary(at: "script").run(
            ["-q", "-e", "-c", scan.map(shellQuoted).joined(separator: " "), "/dev/null"],
            environment: ["LOYALTY_HOME": shopper.home.path, "LOYALTY_SERVER": server.url])
        #expect(terminal.status == 0, "\(terminal.stdout)")
        #expect(!terminal.stdout.contains(uuid), "the screen names the retailer, not its UUID")

        let header = "BEACON"
        let events = [
            "entered Matey's West End", "entered Matey's Carnaby (Matey's West End)",
            "left Matey's Carnaby (Matey's West End)",
        ]
        let rows = TerminalScreen(terminal.stdout).lines
        let eventRows = events.map { event in rows.firstIndex { $0.hasSuffix(event) } }
        let headerRows = rows.indices.filter { rows[$0].hasPrefix(header) }
        #expect(eventRows.allSatisfy { $0 != nil }, "\(rows.joined(separator: "\n"))")
        #expect(eventRows.compactMap { $0 } == eventRows.compactMap { $0 }.sorted())
        // One table, under every event line: redrawn in place, never over them.
        #expect(headerRows.count == 1, "\(rows.joined(separator: "\n"))")
        #expect(eventRows.allSatisfy { ($0 ?? .max) < (headerRows.first ?? .min) })
        // And it was redrawn after the last event: the events outlived redraws.
        let output = terminal.stdout
        if let left = output.range(of: events[2]) {
            #expect(output[left.upperBound...].components(separatedBy: header).count > 2)
        }
    }
}

private func shellQuoted(_ word: String) -> String {
    "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
}
