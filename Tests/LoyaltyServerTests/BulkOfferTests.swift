import Foundation
import JSONCoding
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Synchronization
import Testing

@testable import LoyaltyServer

extension TestServer {
    func importOffers(_ retailer: RetailerCredentials, _ csv: String) throws -> TestResponse {
        try request(
            "POST", "/v1/retailer/offers/import", token: retailer.apiKey, body: Array(csv.utf8),
            headers: ["Content-Type": "text/csv"])
    }

    func offers(_ retailer: RetailerCredentials) throws -> [Offer] {
        try request("GET", "/v1/retailer/offers", token: retailer.apiKey).decode(OfferList.self).offers
    }

    func feedVersion() throws -> Int64 {
        try pool.withConnection { try $0.query("SELECT version FROM catalog_feed")[0].decode("version") }
    }
}

@Suite struct BulkOfferTests {
    /// A spreadsheet's CSV: byte order mark, CRLF, quoted cells with commas and quotes, every optional column,
    /// in another order. Exported and imported again, it changes nothing. A quoted line break reads as part of
    /// its cell, and is refused there like any control character in retailer text.
    @Test func aFileWithABOMAndCRLFImportsInOneStepAndExportsBack() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let csv =
            "\u{FEFF}minor,major,title,category,description,ends_at,starts_at,total_limit,per_shopper_limit,reshow_after_s,image_url\r\n"
            + "1,1,\"30% off sushi, today\",food,\"The \"\"Japanese\"\" Kitchen, first floor\",2030-01-01T00:00:00Z,2026-01-01T00:00:00Z,100,2,3600,https://example.com/s.png\r\n"
            + "2,1,BOGOF pizza,food,,,,,,,\r\n"
            + "\r\n"
            + "1,2,50% off ladies' clothing,clothing,,,,,,,\r\n"
        let reply = try server.importOffers(matey, csv)
        #expect(reply.status == 200, "\(reply.text)")
        #expect(try reply.decode(OfferImportResult.self) == OfferImportResult(created: 3, updated: 0, unchanged: 0))
        let offers = try server.offers(matey)
        #expect(offers.map { "\($0.major).\($0.minor)" } == ["1.1", "1.2", "2.1"])
        let sushi = try #require(offers.first)
        #expect(sushi.title == "30% off sushi, today" && sushi.description == "The \"Japanese\" Kitchen, first floor")
        #expect(sushi.totalLimit == 100 && sushi.perShopperLimit == 2 && sushi.reshowAfterSeconds == 3600)
        #expect(sushi.endsAt == LoyaltyJSON.parseTimestamp("2030-01-01T00:00:00Z"))
        #expect(offers[1].description == nil && offers[1].perShopperLimit == 1)

        let export = try server.request("GET", "/v1/retailer/offers/export", token: matey.apiKey)
        #expect(export.status == 200 && export.headers["content-type"]?.hasPrefix("text/csv") == true)
        let version = try server.feedVersion()
        let again = try server.importOffers(matey, export.text)
        #expect(try again.decode(OfferImportResult.self) == OfferImportResult(created: 0, updated: 0, unchanged: 3))
        #expect(try server.feedVersion() == version, "an unchanged file moved the catalog feed")
        #expect(try server.offers(matey) == offers)

        let changed = try server.importOffers(matey, "major,minor,title\n1,1,40% off sushi\n3,1,New\n")
        #expect(try changed.decode(OfferImportResult.self) == OfferImportResult(created: 1, updated: 1, unchanged: 0))
        let replaced = try server.offers(matey)
        #expect(replaced.first?.id == sushi.id && replaced.first?.description == nil, "a row replaces the whole offer")
        #expect(replaced.count == 4, "offers not in the file stay")

        let broken = try server.importOffers(
            matey, "major,minor,title,description\r\n5,1,Two lines,\"first\r\nsecond\"\r\n5,2,Next,\r\n")
        #expect(broken.status == 422 && broken.text.contains("line 2: description"), "\(broken.text)")
        #expect(try server.offers(matey).count == 4, "a refused file writes nothing")
    }

    /// Every bad row is named with its line and column, and nothing of the file is written.
    @Test func badRowsImportNothingAndNameTheirLines() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        try server.putOffer(matey, major: 9, minor: 9, OfferDraft(title: "Before"))
        let version = try server.feedVersion()
        let csv = """
            major,minor,title,ends_at,total_limit
            1,1,Fine,,
            1,2,,,
            70000,1,Too big,,
            1,3,Bad date,tomorrow,
            1,4,Bad limit,,0
            1,5,Too few cells
            """
        let reply = try server.importOffers(matey, csv)
        #expect(reply.status == 422 && reply.errorCode == .validationFailed)
        let rows = try #require(try reply.decode(APIErrorBody.self).error.rows)
        #expect(rows.map(\.line) == [3, 4, 5, 6, 7])
        #expect(rows.map(\.field) == ["title", "major", "ends_at", "total_limit", nil])
        #expect(reply.text.contains("nothing was imported: line 3: title"))
        #expect(try server.offers(matey).map(\.title) == ["Before"])
        #expect(try server.feedVersion() == version)

        for (csv, message) in [
            ("minor,title\n1,x\n", "major is a required column"),
            ("major,minor,title,colour\n1,1,x,red\n", "colour is not a column"),
            ("", "the file is empty"),
            ("major,minor,title\n1,1,\"never closed\n", "never closes"),
            ("major,minor,title\n1,1,a\"b\n", "quote inside an unquoted cell"),
        ] {
            let refused = try server.importOffers(matey, csv)
            #expect(refused.status == 422 && refused.text.contains(message), "\(csv): \(refused.text)")
        }
        let binary = try server.request(
            "POST", "/v1/retailer/offers/import", token: matey.apiKey, body: [0x6D, 0xFF, 0xFE, 0x0A])
        #expect(binary.status == 422 && binary.text.contains("not UTF-8"))
    }

    @Test func aDuplicateBeaconNamesBothLines() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let reply = try server.importOffers(matey, "major,minor,title\n1,1,A\n1,2,B\n01,1,C\n")
        #expect(reply.status == 422)
        let rows = try #require(try reply.decode(APIErrorBody.self).error.rows)
        #expect(rows.map(\.line) == [4])
        #expect(rows.first?.message.contains("major 1 minor 1 is on line 2 too") == true, "\(reply.text)")
        #expect(try server.offers(matey).isEmpty)
    }

    /// 100,001 rows: refused naming the first line past the limit, nothing written; a body over 32 MiB is 413.
    @Test func overTheRowLimitOrTheSizeLimitIsRefused() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        var csv = "major,minor,title\n"
        for index in 0...OfferCSV.maxRows { csv += "\(index >> 16),\(index & 0xFFFF),Offer \(index)\n" }
        let reply = try server.importOffers(matey, csv)
        #expect(reply.status == 422, "\(reply.text.prefix(300))")
        #expect(reply.text.contains("line 100002") && reply.text.contains("split the file"), "\(reply.text.prefix(300))")
        #expect(try server.offers(matey).isEmpty)

        let huge = "major,minor,title\n" + String(repeating: "1,1,x\n", count: (32 << 20) / 6 + 1)
        let tooLarge = try server.importOffers(matey, huge)
        #expect(tooLarge.status == 413 && tooLarge.errorCode == .payloadTooLarge)
    }

    /// An import's rows have a version each: feed pages end between them and together hold every row once.
    @Test func importedRowsPageThroughTheFeedOneVersionEach() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let device = try server.createAccount()
        let start: CatalogPage = try server.catalog(device).decode()
        let csv = "major,minor,title\n" + (1...25).map { "1,\($0),Offer \($0)\n" }.joined()
        #expect(try server.importOffers(matey, csv).status == 200)
        let versions = try server.pool.withConnection { connection in
            try connection.query("SELECT version FROM offers ORDER BY version").map { row throws(PostgresError) in
                try row.decode("version", as: Int64.self)
            }
        }
        let head = try server.feedVersion()
        #expect(Set(versions).count == 25 && versions.last == head)
        var titles: [String] = []
        var cursor = start.cursor
        while true {
            let page: CatalogPage = try server.catalog(device, since: cursor, limit: 7).decode()
            #expect(page.offers.count <= 7)
            titles += page.offers.map(\.title)
            cursor = page.cursor
            if !page.more { break }
        }
        #expect(titles == (1...25).map { "Offer \($0)" })
    }

    /// An import waits for a catalog write that took its version first and commits after it, so a reader
    /// between the two cannot move its cursor past the import's rows.
    @Test func anImportCommittedAfterAnOpenWriteIsNotSkipped() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let device = try server.createAccount()
        let start: CatalogPage = try server.catalog(device).decode()

        let first = try PostgresConnection(conninfo: server.conninfo)
        try first.query("BEGIN")
        try first.query(
            "INSERT INTO offers (retailer_id, major, minor, title, updated_at) VALUES (\(matey.id), 1, 1, 'A', now())")
        let imported = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let reply = try? server.importOffers(matey, "major,minor,title\n2,1,B\n2,2,C\n")
            imported.store(reply?.status == 200, ordering: .sequentiallyConsistent)
            done.signal()
        }.start()
        let blocked = try server.waitForALockWait { imported.load(ordering: .sequentiallyConsistent) }
        #expect(blocked, "the import did not wait for A's lock")
        let importedWhileAWasOpen = imported.load(ordering: .sequentiallyConsistent)
        #expect(!importedWhileAWasOpen, "the import committed while A was open")
        let middle: CatalogPage = try server.catalog(device, since: start.cursor).decode()
        #expect(middle.offers.isEmpty)
        try first.query("COMMIT")
        #expect(done.wait(timeout: .now() + 10) == .success)
        let importedAfter = imported.load(ordering: .sequentiallyConsistent)
        #expect(importedAfter)
        let after: CatalogPage = try server.catalog(device, since: middle.cursor).decode()
        #expect(after.offers.map(\.title) == ["A", "B", "C"])
    }

    /// A 100,000-row import once held every other retailer's catalog writes for its whole statement (an offer
    /// PUT waited 3.8 s): it is applied in batches now, and another retailer's PUT waits for one batch at most.
    @Test func aLargeImportHoldsAnotherRetailersWritesForOneBatchAtMost() throws {
        let server = try TestServer()
        let big = try server.registerRetailer("Big")
        let other = try server.registerRetailer("Other")
        let csv = "major,minor,title\n" + (0..<100_000).map { "\($0 / 50_000 + 1),\($0 % 50_000),Offer \($0)" }
            .joined(separator: "\n")
        let answer = Mutex<TestResponse?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            answer.withLock { $0 = try? server.importOffers(big, csv) }
            done.signal()
        }.start()
        var slowest = Duration.zero
        var puts = 0
        while done.wait(timeout: .now()) == .timedOut {
            let started = ContinuousClock.now
            try server.putOffer(other, major: 1, minor: puts % 100, OfferDraft(title: "Put \(puts)"))
            slowest = max(slowest, ContinuousClock.now - started)
            puts += 1
        }
        let reply = try #require(answer.withLock { $0 })
        #expect(reply.status == 200, "\(reply.text)")
        #expect(try reply.decode(OfferImportResult.self).created == 100_000)
        #expect(try server.offers(big).count == 100_000)
        #expect(puts > 10 && slowest < .seconds(1), "\(puts) PUTs, the slowest \(slowest)")
    }

    /// A file staged whole and applied only in part (its request ended midway) is applied whole at the server's
    /// start, and before its retailer's next import, whose rows then come after it.
    @Test func aStagedImportLeftMidwayIsAppliedWhole() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let importID = UUID()
        try server.pool.withConnection { connection in
            try connection.query(
                """
                INSERT INTO offer_import_rows (import_id, position, retailer_id, major, minor, title, per_shopper_limit)
                SELECT \(importID), n, \(matey.id), 1, n, 'Staged ' || n, 1 FROM generate_series(1, 2500) AS n
                """)
        }
        #expect(try server.importOffers(matey, "major,minor,title\n1,1,Newer\n").status == 200)
        let offers = try server.offers(matey)
        #expect(offers.count == 2_500 && offers.first { $0.minor == 1 }?.title == "Newer")
        let left: Int = try server.pool.withConnection {
            try $0.query("SELECT count(*) AS n FROM offer_import_rows")[0].decode("n")
        }
        #expect(left == 0)
    }

    @Test func offersComeAPageAtATime() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        #expect(try server.importOffers(matey, "major,minor,title\n" + (1...5).map { "\($0 % 2),\($0),T\($0)\n" }.joined()).status == 200)
        var seen: [String] = []
        var after: String?
        repeat {
            let page: OfferList = try server.request(
                "GET", "/v1/retailer/offers?limit=2" + (after.map { "&after=\($0)" } ?? ""), token: matey.apiKey
            ).decode()
            #expect(page.offers.count <= 2)
            seen += page.offers.map { "\($0.major).\($0.minor)" }
            after = page.next
        } while after != nil
        #expect(seen == ["0.2", "0.4", "1.1", "1.3", "1.5"])
        for bad in ["limit=0", "limit=1001", "after=1", "after=1.70000", "limit=x"] {
            let reply = try server.request("GET", "/v1/retailer/offers?\(bad)", token: matey.apiKey)
            #expect(reply.status == 422, "\(bad): \(reply.text)")
        }
    }
}

/// What a hostile file or a hostile title cannot do (issue 23, items 4 and 12).
@Suite struct OfferCSVHardeningTests {
    /// 5,000 columns once cost 5,000 problems (and a million a minute and gigabytes): now one, at the header.
    @Test func aHeaderBeyondTheKnownColumnsIsRefusedAtOnce() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let header = "major,minor,title" + (0..<5_000).map { ",extra\($0)" }.joined()
        let reply = try server.importOffers(matey, header + "\n1,1,Sushi\n")
        #expect(reply.status == 422)
        let error = try reply.decode(APIErrorBody.self).error
        #expect(error.rows?.count == 1, "\(error.rows?.count ?? 0) problems")
        #expect(error.message.contains("line 1: has more than 13 cells"), "\(error.message)")
        #expect(try server.offers(matey).isEmpty)
    }

    /// A spreadsheet opening the export must not run a cell: each that starts as a formula would gets a quote,
    /// which importing the file again takes away.
    @Test func theExportNeutralisesFormulasAndImportsBackUnchanged() throws {
        let server = try TestServer()
        let matey = try server.registerRetailer()
        let titles = ["=HYPERLINK(\"https://evil.example\",\"Sushi\")", "+1 free drink", "-50% off", "@SUM(A1)", "'quoted'", "''="]
        for (minor, title) in titles.enumerated() {
            try server.putOffer(matey, major: 1, minor: minor, OfferDraft(title: title))
        }
        let export = try server.request("GET", "/v1/retailer/offers/export", token: matey.apiKey).text
        let exportedTitles = export.split(separator: "\r\n").dropFirst().map { line in
            line.split(separator: ",", maxSplits: 2)[2]
        }
        #expect(exportedTitles.allSatisfy { $0.hasPrefix("'") || $0.hasPrefix("\"'") }, "\(exportedTitles)")
        #expect(!exportedTitles.contains { $0.hasPrefix("=") || $0.hasPrefix("\"=") }, "\(exportedTitles)")

        let again = try server.importOffers(matey, export)
        #expect(try again.decode(OfferImportResult.self) == OfferImportResult(created: 0, updated: 0, unchanged: 6))
        #expect(try server.offers(matey).map(\.title) == titles)
    }
}
