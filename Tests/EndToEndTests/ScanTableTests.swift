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
        try shopper.ok(["sync"])

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

        let header = "BEACON"
        let events = [
            "entered beacon region \(uuid)", "entered Matey's Carnaby (Matey's West End)",
            "left Matey's Carnaby (Matey's West End)",
        ]
        let rows = screen(after: terminal.stdout)
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

/// The rows a terminal shows after `output`, for the controls the scan writes: carriage return, line
/// feed, cursor up (CSI n A), home (CSI H), erase below or all (CSI J, CSI 2J) and erase to the end of
/// the line (CSI K). The terminal is as tall as it needs to be, so nothing scrolls out of reach.
private func screen(after output: String) -> [String] {
    var rows: [[Unicode.Scalar]] = [[]]
    var row = 0
    var column = 0
    var scalars = output.unicodeScalars.makeIterator()
    while let scalar = scalars.next() {
        switch scalar {
        case "\r":
            column = 0
        case "\n":
            row += 1
            if rows.count == row { rows.append([]) }
        case "\u{1B}":
            guard scalars.next() == "[" else { continue }
            var parameter = ""
            var final = scalars.next()
            while let digit = final, ("0"..."9").contains(digit) {
                parameter.unicodeScalars.append(digit)
                final = scalars.next()
            }
            switch final {
            case "A": row = max(0, row - (Int(parameter) ?? 1))
            case "H": (row, column) = (0, 0)
            case "J" where parameter == "2": rows = rows.map { _ in [] }
            case "J":
                rows[row].removeSubrange(min(column, rows[row].count)...)
                rows.removeSubrange((row + 1)...)
            case "K": rows[row].removeSubrange(min(column, rows[row].count)...)
            default: break
            }
        default:
            while rows[row].count < column { rows[row].append(" ") }
            if column < rows[row].count { rows[row][column] = scalar } else { rows[row].append(scalar) }
            column += 1
        }
    }
    return rows.map { String(String.UnicodeScalarView($0)) }
}
