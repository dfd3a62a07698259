import Foundation
import LoyaltyTesting
import Testing

/// A busy port is found and named before the embedded cluster is made (the server ran
/// initdb, started PostgreSQL, then said "Failed to bind to port 0").
@Suite struct ServerStartTests {
    @Test func aBusyPortIsNamedBeforeAnyDatabaseWork() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        try #require(bound)
        let port = UInt16(bigEndian: address.sin_port)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("busy-port-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }

        let result = try Binary("loyalty-server").run(
            ["--listen", "127.0.0.1:\(port)", "--data-dir", directory.path], timeout: 60)
        #expect(result.status != 0)
        #expect(result.stderr.contains("cannot listen on 127.0.0.1:\(port)"), "\(result.stderr)")
        #expect(result.stderr.contains("Address already in use"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("pg").path), "initdb ran")
    }
}
