import Foundation
import LoyaltyTesting
import Testing

/// A server (or anyone between, on plain http) that answers with an endless body cannot fill the client's
/// memory: a 2 GiB answer once made `loyalty sync` hold 2.19 GB. Each answer is abandoned past what it can be
/// (a catalog page of 10,000 rows, a list, one object), and the command says so with exit 69.
@Suite struct AnswerSizeTests {
    static let account = """
        {"account_id":"\(UUID().uuidString.lowercased())","device_id":"\(UUID().uuidString.lowercased())",\
        "device_token":"ld_canned"}
        """

    /// Runs `loyalty ARGUMENTS` against `server` under GNU time: the result and the peak resident memory in bytes.
    static func measured(_ arguments: [String], home: URL, server: CannedHTTPServer) throws -> (Binary.Result, Int) {
        let result = try Binary(at: "sh").run(
            ["-c", #"/usr/bin/time -f "peak %M" "$@""#, "sh", Binary("loyalty").url.path] + arguments,
            environment: ["LOYALTY_HOME": home.path, "LOYALTY_SERVER": server.url])
        let peak = result.stderr.split(separator: "\n").last { $0.hasPrefix("peak ") }
        return (result, (peak.flatMap { Int($0.dropFirst("peak ".count)) } ?? Int.max / 1024) * 1024)
    }

    @Test func anEndlessCatalogPageIsAbandonedAtWhatAPageCanBe() throws {
        let server = try CannedHTTPServer([
            CannedHTTPServer.Answer("POST /v1/accounts", status: 201, body: Self.account),
            CannedHTTPServer.Answer("GET /v1/catalog", streamedBytes: 4 << 30, saysLength: false),
        ])
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-endless-\(UUID())")
        defer { try? FileManager.default.removeItem(at: home) }
        let (created, _) = try Self.measured(["account", "create"], home: home, server: server)
        #expect(created.status == 0, "\(created.stderr)")

        // The whole catalog's pages (a working set asks for parts: the next test).
        let (sync, peak) = try Self.measured(["sync", "--all"], home: home, server: server)
        #expect(sync.status == 69, "\(sync.stderr)")
        #expect(sync.stderr.contains("/v1/catalog") && sync.stderr.contains("is longer than the"), "\(sync.stderr)")
        // A page of 10,000 of the longest rows is 121 MB: it goes to a temporary file and is read from there a
        // few MiB at a time, so the peak is the program's own (it was 158 MiB when a page was held whole).
        #expect(peak < 100 << 20, "peak RSS \(peak >> 20) MiB")
    }

    @Test func anAnswerThatSaysItIsHugeIsRefusedBeforeItsBody() throws {
        let server = try CannedHTTPServer([
            CannedHTTPServer.Answer("POST /v1/accounts", streamedBytes: 2 << 30, saysLength: true)
        ])
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-huge-\(UUID())")
        defer { try? FileManager.default.removeItem(at: home) }
        let (created, peak) = try Self.measured(["account", "create"], home: home, server: server)
        #expect(created.status == 69, "\(created.stderr)")
        #expect(created.stderr.contains("is longer than the 1048576 bytes such an answer can be"), "\(created.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home.appendingPathComponent("device.json").path))
        #expect(peak < 64 << 20, "peak RSS \(peak >> 20) MiB")
    }

    /// A working set's fetch of a heard UUID's bucket is a catalog page like any other: a hostile server's endless
    /// answer to it is abandoned at what a page can be, and the UUID stays queued for the next sync.
    @Test func anEndlessBucketAnswerIsAbandonedAtWhatAPageCanBe() throws {
        let uuid = UUID().uuidString
        let directory = """
            {"buckets":4,"server_time":"2026-01-01T00:00:00Z","retailers":[{"id":"\(UUID().uuidString.lowercased())",\
            "name":"Somewhere","uuid":"\(uuid)","bucket":2,"head":7,"stores":[]}]}
            """
        let server = try CannedHTTPServer([
            CannedHTTPServer.Answer("POST /v1/accounts", status: 201, body: Self.account),
            CannedHTTPServer.Answer("GET /v1/directory", status: 200, body: directory),
            CannedHTTPServer.Answer("GET /v1/catalog?bucket=2&buckets=4", streamedBytes: 4 << 30, saysLength: false),
            CannedHTTPServer.Answer("GET /v1/seen", status: 200, body: #"{"cursor":"s1","items":[]}"#),
            CannedHTTPServer.Answer("GET /v1/redemptions", status: 200, body: #"{"redemptions":[]}"#),
            CannedHTTPServer.Answer(
                "GET /v1/preferences", status: 200,
                body: #"{"muted_retailers":[],"offers_per_hour":20,"offers_per_day":50}"#),
        ])
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("loyalty-bucket-\(UUID())")
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["LOYALTY_HOME": home.path, "LOYALTY_SERVER": server.url]
        let loyalty = Binary("loyalty")
        #expect(try loyalty.run(["account", "create"], environment: environment).status == 0)
        let first = try loyalty.run(["sync"], environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        let walk = home.appendingPathComponent("walk.btsnoop")
        let simulated = try loyalty.run(
            ["beacon", "simulate", "--write", walk.path, "--walk", "\(uuid):1:1@0=5,10=1,20=5"], environment: environment)
        #expect(simulated.status == 0, "\(simulated.stderr)")
        #expect(try loyalty.run(["scan", "--replay", walk.path, "--offline"], environment: environment).status == 0)

        let (sync, _) = try Self.measured(["sync"], home: home, server: server)
        #expect(sync.status == 69, "\(sync.stderr)")
        #expect(sync.stderr.contains("/v1/catalog") && sync.stderr.contains("is longer than the"), "\(sync.stderr)")
        #expect(server.received.contains { $0.hasPrefix("GET /v1/catalog?bucket=2&buckets=4 ") })
    }
}
