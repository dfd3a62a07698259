import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Testing

/// `loyalty account export` and `loyalty account delete` through the built binary against a real server.
@Suite struct AccountDataCommandTests {
    /// A shopper's device: `loyalty` with a home of its own against `server`.
    struct Shopper {
        let home: URL
        let server: TestServer

        init(_ server: TestServer) throws {
            self.server = server
            home = try ThrowawayDirectory.make("loyalty-account-data")
            let created = try run(["account", "create", "--name", "phone"])
            try #require(created.status == 0, "\(created.stderr)")
        }

        func run(_ arguments: [String], measured: Bool) throws -> (Binary.Result, peak: Int) {
            let environment = ["LOYALTY_HOME": home.path, "LOYALTY_SERVER": server.baseURL]
            guard measured else { return (try Binary("loyalty").run(arguments, environment: environment), 0) }
            let result = try Binary(at: "sh").run(
                ["-c", #"/usr/bin/time -f "peak %M" "$@""#, "sh", Binary("loyalty").url.path] + arguments,
                environment: environment)
            let peak = result.stderr.split(separator: "\n").last { $0.hasPrefix("peak ") }
            return (result, (peak.flatMap { Int($0.dropFirst("peak ".count)) } ?? Int.max / 1024) * 1024)
        }

        func run(_ arguments: [String]) throws -> Binary.Result { try run(arguments, measured: false).0 }

        var accountID: UUID {
            get throws {
                let shown = try run(["account", "show", "--json"])
                let line = try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any]
                let id = (line?["account_id"] as? String).flatMap { UUID(uuidString: $0) }
                return try #require(id, "\(shown.stdout)")
            }
        }
    }

    /// An account with 100,000 seen offers exports whole, and the command's memory stays near what an empty
    /// account's export takes: the document (tens of MB) is written a page at a time, never held.
    @Test func aLargeAccountExportsInBoundedMemory() throws {
        let server = try TestServer(.socket)
        let retailer = try server.registerRetailer()
        let empty = try Shopper(server)
        let file = empty.home.appendingPathComponent("export.json")
        let (small, smallPeak) = try empty.run(["account", "export", "--output", file.path], measured: true)
        try #require(small.status == 0, "\(small.stderr)")

        let shopper = try Shopper(server)
        let accountID = try shopper.accountID
        try server.pool.withConnection { connection in
            // Versions given, so the catalog feed's trigger leaves them (one bump per row would take minutes).
            try connection.query(
                """
                INSERT INTO offers (retailer_id, major, minor, title, updated_at, created_at, version)
                SELECT \(retailer.id), g / 1000, g % 1000, 'Offer ' || g, now() - interval '1 day',
                    now() - interval '1 day', 1
                FROM generate_series(0, 99999) AS g
                """)
            try connection.query(
                """
                INSERT INTO seen (account_id, offer_id, seen_at, version)
                SELECT \(accountID), id, now(), 1 FROM offers WHERE retailer_id = \(retailer.id)
                """)
        }
        let big = shopper.home.appendingPathComponent("export.json")
        let (exported, peak) = try shopper.run(["account", "export", "--output", big.path, "--json"], measured: true)
        try #require(exported.status == 0, "\(exported.stderr)")
        let line = try JSONSerialization.jsonObject(with: Data(exported.stdout.utf8)) as? [String: Any]
        #expect(line?["event"] as? String == "account_exported" && line?["seen"] as? Int == 100_000, "\(exported.stdout)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: big.path)[.size] as? Int)
        #expect(try FileManager.default.attributesOfItem(atPath: big.path)[.posixPermissions] as? Int == 0o600)
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: big)) as? [String: Any])
        #expect((document["seen"] as? [Any])?.count == 100_000)
        #expect((document["account_id"] as? String)?.lowercased() == accountID.uuidString.lowercased())
        #expect(size > 10 << 20, "the document is \(size) bytes")
        #expect(peak < smallPeak + (16 << 20), "peak RSS \(peak >> 20) MiB, an empty account's \(smallPeak >> 20) MiB")
    }

    /// Export to standard output is the same document; delete refuses without a terminal or --yes, then deletes,
    /// removes this device's state, and the server holds nothing of the account.
    @Test func exportThenDeleteThroughTheCommand() throws {
        let server = try TestServer(.socket)
        let shopper = try Shopper(server)
        let accountID = try shopper.accountID
        let printed = try shopper.run(["account", "export"])
        #expect(printed.status == 0, "\(printed.stderr)")
        let document = try JSONSerialization.jsonObject(with: Data(printed.stdout.utf8)) as? [String: Any]
        #expect((document?["account_id"] as? String)?.lowercased() == accountID.uuidString.lowercased())
        #expect((document?["devices"] as? [[String: Any]])?.first?["name"] as? String == "phone")
        #expect(document?["seen"] is [Any] && document?["verified_sightings"] is [Any])

        let unasked = try shopper.run(["account", "delete"])
        #expect(unasked.status == 64)
        #expect(unasked.stderr.contains("not a terminal") && unasked.stderr.contains("--yes"), "\(unasked.stderr)")
        #expect(FileManager.default.fileExists(atPath: shopper.home.appendingPathComponent("device.json").path))

        let deleted = try shopper.run(["account", "delete", "--yes", "--json"])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(deleted.stdout.contains("\"event\":\"account_deleted\""), "\(deleted.stdout)")
        for file in ["device.json", "cache.sqlite"] {
            #expect(!FileManager.default.fileExists(atPath: shopper.home.appendingPathComponent(file).path), "\(file)")
        }
        let left = try server.pool.withConnection { connection in
            try connection.query(
                """
                SELECT count(*) AS n FROM (
                    SELECT id::text AS id FROM accounts UNION ALL SELECT account_id::text FROM devices
                    UNION ALL SELECT account_id::text FROM seen UNION ALL SELECT account_id::text FROM redemptions
                ) AS ids WHERE id = \(accountID.uuidString.lowercased())
                """
            )[0].decode("n", as: Int.self)
        }
        #expect(left == 0)
        let again = try shopper.run(["account", "delete", "--yes"])
        #expect(again.status != 0 && again.stderr.contains("no account"), "\(again.stderr)")
    }
}
