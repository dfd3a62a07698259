import Foundation
import Geofencing
import Testing

@testable import LoyaltyClient

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct PositionSourceTests {
    @Test func locationSourcesParse() {
        #expect(LocationSource(parsing: "gpsd") == .gpsd(host: "localhost", port: 2947))
        #expect(LocationSource(parsing: "gpsd:10.0.0.2:2948") == .gpsd(host: "10.0.0.2", port: 2948))
        #expect(LocationSource(parsing: "gpsd:[::1]:2947") == .gpsd(host: "[::1]", port: 2947))
        #expect(LocationSource(parsing: "nmea:walk.nmea") == .nmea(path: "walk.nmea"))
        #expect(LocationSource(parsing: "fixed:51.5,-0.1") == .fixed(GeoCoordinate(latitude: 51.5, longitude: -0.1)))
        for bad in ["", "gps", "gpsd:host", "gpsd::2947", "gpsd:host:0", "nmea:", "fixed:91,0", "fixed:x"] {
            #expect(LocationSource(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test func aFixedPositionIsOneFixAtNowAndALogItsFixes() throws {
        var fixes: [GeoFix] = []
        let point = GeoCoordinate(latitude: 51.5, longitude: -0.1)
        #expect(try followPositions(.fixed(point), now: 42) { fixes.append($0) } == .fixed)
        #expect(fixes == [GeoFix(time: 42, coordinate: point)])

        let log = try temporaryDirectory().appendingPathComponent("walk.nmea")
        let walk = (0..<3).map { GeoFix(time: 1_800_000_000 + Double($0), coordinate: point) }
        try (walk.map(NMEAWriter.rmc) + ["$GPRMC,garbage*00"]).joined(separator: "\r\n").write(
            to: log, atomically: true, encoding: .utf8)
        fixes = []
        let end = try followPositions(.nmea(path: log.path), now: 0) { fixes.append($0) }
        #expect(fixes.map(\.time) == walk.map(\.time))
        guard case .log(let statistics) = end else { return #expect(Bool(false), "\(end)") }
        #expect(statistics.lines == 4 && statistics.fixes == 3 && statistics.malformed == 1)
        #expect {
            _ = try NMEAFixes(path: "/nonexistent.nmea")
        } throws: { error in
            guard case .unreadableLog(let path, _)? = error as? PositionSourceError else { return false }
            return path == "/nonexistent.nmea"
        }
    }

    /// A gpsd of a few lines on a loopback socket: the watch command arrives, the fixes go out, and the
    /// session ends when the receiver goes away.
    @Test func gpsdFixesUntilItsReceiverGoes() throws {
        let (listener, port) = try loopbackSocket(listening: true)
        let served = Thread {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            var command = [UInt8](repeating: 0, count: 64)
            _ = recv(client, &command, command.count, 0)
            let lines = [
                #"{"class":"DEVICES","devices":[{"class":"DEVICE","path":"/dev/ttyUSB0","activated":"2026-01-01T00:00:00.000Z"}]}"#,
                #"{"class":"TPV","mode":3,"time":"2026-01-01T00:00:01.000Z","lat":51.5,"lon":-0.1}"#,
                #"{"class":"SKY"}"#,
                #"{"class":"TPV","mode":2,"time":"2026-01-01T00:00:02.500Z","lat":51.6,"lon":-0.2}"#,
                #"{"class":"DEVICE","path":"/dev/ttyUSB0","activated":0}"#,
                #"{"class":"TPV","mode":3,"time":"2026-01-01T00:00:03.000Z","lat":51.7,"lon":-0.3}"#,
            ]
            let text = Array((lines.joined(separator: "\n") + "\n").utf8)
            _ = text.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(client)
        }
        served.start()
        var fixes: [GeoFix] = []
        let end = try followPositions(.gpsd(host: "127.0.0.1", port: port), now: 0) { fixes.append($0) }
        #expect(end == .gpsdReceiversGone)
        #expect(fixes.map(\.coordinate.latitude) == [51.5, 51.6])
        #expect(fixes.map(\.time) == [1_767_225_601, 1_767_225_602.5])

        close(listener)

        // A port that is held but not listening refuses: gpsd is unavailable, said plainly.
        let (held, refusing) = try loopbackSocket(listening: false)
        defer { close(held) }
        #expect {
            _ = try followPositions(.gpsd(host: "127.0.0.1", port: refusing), now: 0) { _ in }
        } throws: { error in
            guard case .gpsdUnavailable(let reason)? = error as? PositionSourceError else { return false }
            return reason.contains("cannot connect to gpsd at 127.0.0.1:\(refusing)")
        }
    }

    /// A TCP socket bound to a free loopback port, listening or not.
    func loopbackSocket(listening: Bool) throws -> (descriptor: Int32, port: UInt16) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && (!listening || listen(descriptor, 1) == 0)
                    && getsockname(descriptor, pointer, &length) == 0
            }
        }
        try #require(bound)
        return (descriptor, UInt16(bigEndian: address.sin_port))
    }
}
