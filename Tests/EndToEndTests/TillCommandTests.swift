import Foundation
import LoyaltyTesting
import Testing

/// Through the real binaries: till keys, `loyalty till check|accept`, offers import and export, stats
/// over days, and the code as a QR code.
@Suite struct TillCommandTests {
    /// A retailer with a till key and an offer at 1:1, a shopper who synced.
    struct Shop {
        let server: StoryServer
        let retailer: StoryDevice
        let uuid: String
        let tillKey: String
        let shopper: StoryDevice

        init(_ offers: [(Int, String, [String])] = [(1, "30% off sushi", [])]) throws {
            server = try StoryServer.shared.get()
            uuid = UUID().uuidString
            retailer = try server.retailer("Till shop \(uuid.prefix(4))", uuid: uuid)
            for (minor, title, options) in offers { try retailer.setOffer(1, minor, title, options) }
            let created = try retailer.ok(["retailer", "till-key", "create", "--name", "Front till", "--json"]).jsonLines
            tillKey = try #require(created.first?["till_key"] as? String)
            shopper = try server.newAccount()
            try shopper.ok(["sync"])
        }

        func redeem(_ minor: Int = 1) throws -> String {
            try shopper.visit(uuid, minors: [minor])
            let line = try shopper.ok(["redeem", "\(uuid):1:\(minor)", "--json"]).jsonLines
            return try #require(line.first?["code"] as? String)
        }

        func till(_ arguments: [String], key: String? = nil) throws -> Binary.Result {
            try retailer.run(["till"] + arguments, ["LOYALTY_TILL_KEY": key ?? tillKey])
        }
    }

    @Test func aCodeIsAcceptedOnceAndTheShoppersHistorySaysSo() throws {
        let shop = try Shop()
        let listed = try shop.retailer.ok(["retailer", "till-key", "list"]).stdout
        #expect(listed.contains("Front till") && !listed.contains(shop.tillKey))

        let code = try shop.redeem()
        let checked = try shop.till(["check", code])
        #expect(checked.status == 0 && checked.stdout.contains("is valid") && checked.stdout.contains("30% off sushi"))
        // As a cashier types it: lower case, in two groups.
        let typed = code.lowercased().prefix(5) + "-" + code.lowercased().dropFirst(5)
        let accepted = try shop.retailer.run(["till", "accept", String(typed), "--till-key", shop.tillKey])
        #expect(accepted.status == 0, "\(accepted.stderr)")
        let again = try shop.till(["accept", code])
        #expect(again.status == 1 && again.stderr.contains("was used at") && again.stderr.contains("\"Front till\""))
        // Said as the cashier needs it, not as an HTTP error.
        #expect(again.stderr.hasPrefix("error: not accepted: this code was used at"), "\(again.stderr)")
        #expect(try shop.till(["check", code]).status == 1, "a used code is no good at the till")

        #expect(!(try shop.shopper.ok(["history"]).stdout.contains("used at the till")), "not before a sync")
        try shop.shopper.ok(["sync"])
        let history = try shop.shopper.ok(["history"]).stdout
        #expect(history.contains("used at the till"), "\(history)")
        let stats = try shop.retailer.ok(["retailer", "stats", "--json"]).jsonLines
        #expect(stats.first?["accepted"] as? Int == 1 && stats.first?["redemptions"] as? Int == 1)
    }

    @Test func unknownExpiredRemovedAndMisreadCodesSayWhy() throws {
        let shop = try Shop([(1, "Today only", []), (2, "Going away", [])])
        let ending = try shop.redeem(1)
        // Redeemed while it ran; then the retailer ends it (a minute ago: no clock to wait for).
        try shop.retailer.setOffer(1, 1, "Today only", ["--ends", LoyaltyTime.iso(Date().addingTimeInterval(-60))])
        let removing = try shop.redeem(2)
        try shop.retailer.ok(["retailer", "offer", "rm", "1", "2"])

        let unknown = try shop.till(["accept", "ZZZZZZZZZZ"])
        #expect(unknown.status == 1 && unknown.stderr.contains("no redemption has this code"), "\(unknown.stderr)")
        #expect(!unknown.stderr.contains("HTTP"), "\(unknown.stderr)")
        let removed = try shop.till(["accept", removing])
        #expect(removed.status == 1 && removed.stderr.contains("removed"), "\(removed.stderr)")
        let lookAlike = try shop.till(["check", "O" + ending.dropFirst()])
        #expect(lookAlike.status == 65 && lookAlike.stderr.contains("'O' at position 1"), "\(lookAlike.stderr)")
        let expired = try shop.till(["accept", ending])
        #expect(expired.status == 1 && expired.stderr.contains("ended at"), "\(expired.stderr)")

        // Another retailer's till: the same answer as for a code no one issued.
        let other = try Shop()
        let foreign = try other.till(["check", ending])
        #expect(foreign.status == 1 && foreign.stderr.hasPrefix("error: not valid: no redemption has this code"))
    }

    @Test func keysAreRefusedOutsideTheirPlaceAndRevocable() throws {
        let shop = try Shop()
        let code = try shop.redeem()
        let asRetailer = try shop.retailer.run(["retailer", "offers"], ["LOYALTY_RETAILER_KEY": shop.tillKey])
        #expect(asRetailer.status == 77, "a till key on a retailer command: \(asRetailer.stderr)")
        let noKey = try shop.retailer.run(["till", "check", code], ["LOYALTY_TILL_KEY": ""])
        #expect(noKey.status == 64)
        let id = try #require(
            try shop.retailer.ok(["retailer", "till-key", "list", "--json"]).jsonLines.first?["id"] as? String)
        try shop.retailer.ok(["retailer", "till-key", "revoke", id])
        #expect(try shop.till(["check", code]).status == 77)
    }

    /// Eight tills, eight processes, one code at once: one exits 0, seven exit 1 saying where it was used.
    @Test func manyTillsAcceptingAtOnceOneSucceeds() async throws {
        let shop = try Shop()
        let keys = try (1...8).map { index in
            try #require(
                try shop.retailer.ok(["retailer", "till-key", "create", "--name", "Till \(index)", "--json"]).jsonLines
                    .first?["till_key"] as? String)
        }
        let code = try shop.redeem()
        let results = try await withThrowingTaskGroup(of: Binary.Result.self) { group in
            for key in keys { group.addTask { try shop.till(["accept", code], key: key) } }
            return try await group.reduce(into: [Binary.Result]()) { $0.append($1) }
        }
        #expect(results.filter { $0.status == 0 }.count == 1, "\(results.map(\.status))")
        let refused = results.filter { $0.status == 1 }
        #expect(refused.count == 7 && refused.allSatisfy { $0.stderr.contains("was used at") })
    }

    @Test func offersImportExportAndStatsOverDays() throws {
        let shop = try Shop()
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("till-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let good = work.appendingPathComponent("offers.csv")
        try Data("\u{FEFF}major,minor,title,category\r\n2,1,Imported,food\r\n2,2,\"Two, quoted\",food\r\n".utf8)
            .write(to: good)
        let imported = try shop.retailer.ok(["retailer", "offers", "import", good.path])
        #expect(imported.stdout.contains("2 created"), "\(imported.stdout)")
        let bad = work.appendingPathComponent("bad.csv")
        try Data("major,minor,title\n3,1,Fine\n3,1,Twice\n3,2,\n".utf8).write(to: bad)
        let refused = try shop.retailer.run(["retailer", "offers", "import", bad.path])
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("line 3") && refused.stderr.contains("line 4"), "\(refused.stderr)")
        #expect(try shop.retailer.run(["retailer", "offers", "import", work.appendingPathComponent("none.csv").path]).status == 74)

        let exported = work.appendingPathComponent("export.csv")
        try shop.retailer.ok(["retailer", "offers", "export", "--output", exported.path])
        let text = try String(contentsOf: exported, encoding: .utf8)
        #expect(text.hasPrefix("major,minor,title,") && text.contains("\"Two, quoted\"") && !text.contains("Fine"))
        let reimported = try shop.retailer.ok(["retailer", "offers", "import", exported.path, "--json"]).jsonLines
        #expect(reimported.first?["unchanged"] as? Int == 3)

        let code = try shop.redeem()
        #expect(try shop.till(["accept", code]).status == 0)
        let stats = try shop.retailer.ok(["retailer", "stats", "--days", "30"]).stdout
        #expect(stats.contains("ACCEPTED") && stats.contains("CONVERSION") && stats.contains("beacons unheard for 30 days"))
        let days = try shop.retailer.ok(["retailer", "stats", "--days", "30", "--json"]).jsonLines
            .filter { $0["event"] as? String == "day" }
        #expect(days.count == 30 && days.last?["redeemed"] as? Int == 1 && days.last?["accepted"] as? Int == 1)
        #expect(try shop.retailer.run(["retailer", "stats", "--days", "0"]).status == 64)
    }

    /// With --qr (standard output is no terminal here) the code comes as a QR code beside the text.
    @Test func redeemAndHistoryDrawTheCodeAsAQRCode() throws {
        let shop = try Shop()
        try shop.shopper.visit(shop.uuid, minors: [1])
        let redeemed = try shop.shopper.ok(["redeem", "\(shop.uuid):1:1", "--qr"]).stdout
        let lines = redeemed.split(separator: "\n")
        #expect(lines.count >= 15, "\(redeemed)")
        #expect(lines.allSatisfy { $0.hasPrefix("\u{2588}") || $0.hasPrefix(" ") || $0.hasPrefix("\u{2580}") || $0.hasPrefix("\u{2584}") })
        #expect(redeemed.contains("show code ") && redeemed.contains("\u{2584}"))
        let plain = try shop.shopper.ok(["history"]).stdout
        #expect(!plain.contains("\u{2588}"), "no QR code in a pipe without --qr")
        let history = try shop.shopper.ok(["history", "--qr"]).stdout
        #expect(history.contains("\u{2588}") && history.contains("show code"))
    }
}

private enum LoyaltyTime {
    static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: date)
    }
}
