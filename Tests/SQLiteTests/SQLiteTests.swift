import Foundation
import SQLite
import Synchronization
import Testing

/// A fresh directory per test, removed afterwards.
private final class TemporaryDirectory {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("sqlite-tests-\(UUID().uuidString)")
    init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

private struct Abort: Error {}

@Suite struct SQLiteTests {
    @Test func everyValueTypeRoundTrips() throws {
        let directory = try TemporaryDirectory()
        let database = try SQLiteDatabase(path: directory.path("cache.sqlite"))
        try database.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, value ANY) STRICT;")
        let values: [SQLiteValue] = [
            .null, .integer(Int64.min), .integer(Int64.max), .real(-2.5), .real(1e300), .text(""),
            .text("30% off sushi 🍣 at The Japanese Kitchen"), .text("nul\u{0}inside"), .blob([]),
            .blob([0, 1, 0xFF, 0]),
        ]
        for value in values {
            #expect(try database.run("INSERT INTO item (value) VALUES (?)", [value]) == 1)
        }
        #expect(database.lastInsertRowID == Int64(values.count))

        let rows = try database.query("SELECT id, value AS v FROM item ORDER BY id")
        #expect(rows.map { $0["v"] } == values)
        #expect(rows.first?.columnNames == ["id", "v"])
        #expect(rows.first?["missing"] == nil)
        #expect(rows.last?[0].integer == Int64(values.count))
    }

    @Test func updateAndDeleteReportChanges() throws {
        let directory = try TemporaryDirectory()
        let database = try SQLiteDatabase(path: directory.path("cache.sqlite"))
        try database.execute("CREATE TABLE offer (major INTEGER, minor INTEGER, title TEXT);")
        for minor in 1...3 {
            try database.run(
                "INSERT INTO offer VALUES (?, ?, ?)", [.integer(1), .integer(Int64(minor)), .text("t\(minor)")])
        }
        #expect(try database.run("UPDATE offer SET title = ? WHERE minor >= ?", [.text("new"), .integer(2)]) == 2)
        #expect(database.changes == 2)
        #expect(
            try database.query("SELECT title FROM offer ORDER BY minor").map { $0[0].text } == ["t1", "new", "new"])
        #expect(try database.run("DELETE FROM offer WHERE title = ?", [.text("new")]) == 2)
        #expect(try database.query("SELECT count(*) FROM offer").first?[0] == .integer(1))
    }

    @Test func openingSetsWALAndForeignKeys() throws {
        let directory = try TemporaryDirectory()
        let database = try SQLiteDatabase(path: directory.path("cache.sqlite"))
        #expect(try database.query("PRAGMA journal_mode").first?[0] == .text("wal"))
        try database.execute(
            """
            CREATE TABLE retailer (id INTEGER PRIMARY KEY);
            CREATE TABLE offer (id INTEGER PRIMARY KEY, retailer INTEGER NOT NULL REFERENCES retailer (id));
            """)
        let error = #expect(throws: SQLiteError.self) {
            try database.run("INSERT INTO offer (retailer) VALUES (?)", [.integer(42)])
        }
        #expect(error?.isConstraintViolation == true)
    }

    /// Two `loyalty` commands started together both open a cache that does not exist yet: each must wait
    /// for the other, not fail with "database is locked" (seen when two scans replayed at once).
    @Test func connectionsOpeningOneNewFileTogetherAllSucceed() throws {
        let directory = try TemporaryDirectory()
        for round in 0..<20 {
            let path = directory.path("cache-\(round).sqlite")
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 6) { _ in
                do {
                    let database = try SQLiteDatabase(path: path)
                    _ = try database.query("PRAGMA journal_mode")
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [], "round \(round)")
        }
    }

    @Test func throwingTransactionRollsBackAndReturningOneCommits() throws {
        let directory = try TemporaryDirectory()
        let database = try SQLiteDatabase(path: directory.path("cache.sqlite"))
        try database.execute("CREATE TABLE seen (key TEXT PRIMARY KEY);")

        #expect(throws: Abort.self) {
            try database.transaction {
                try database.run("INSERT INTO seen VALUES (?)", [.text("1|1")])
                throw Abort()
            }
        }
        #expect(try database.query("SELECT * FROM seen").isEmpty)

        let inserted = try database.transaction {
            try database.run("INSERT INTO seen VALUES (?)", [.text("1|2")])
            // The inner failure undoes only the inner savepoint.
            try? database.transaction {
                try database.run("INSERT INTO seen VALUES (?)", [.text("2|1")])
                throw Abort()
            }
            return database.lastInsertRowID
        }
        #expect(inserted > 0)
        #expect(try database.query("SELECT key FROM seen").map { $0[0] } == [.text("1|2")])
    }

    @Test func userVersionPersists() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("cache.sqlite")
        do {
            let database = try SQLiteDatabase(path: path)
            #expect(try database.userVersion == 0)
            try database.setUserVersion(3)
        }
        #expect(try SQLiteDatabase(path: path).userVersion == 3)
    }

    @Test func garbageFileIsCorrupt() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("cache.sqlite")
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: SQLiteError.self) { _ = try SQLiteDatabase(path: path) }
        #expect(error == .corrupt(path: path))
    }

    @Test func missingDirectoryCannotOpen() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("no/such/dir/cache.sqlite")
        let error = #expect(throws: SQLiteError.self) { _ = try SQLiteDatabase(path: path) }
        guard case .cannotOpen(let failedPath, _, _) = error else {
            Issue.record("expected cannotOpen, got \(String(describing: error))")
            return
        }
        #expect(failedPath == path)
    }

    @Test func wrongParameterCountAndBadSQLAreTypedErrors() throws {
        let directory = try TemporaryDirectory()
        let database = try SQLiteDatabase(path: directory.path("cache.sqlite"))
        try database.execute("CREATE TABLE t (a, b);")
        #expect(throws: SQLiteError.self) { try database.run("INSERT INTO t VALUES (?, ?)", [.integer(1)]) }
        #expect(throws: SQLiteError.self) { try database.run("INSERT INTO nowhere VALUES (1)") }
        #expect(throws: SQLiteError.self) { try database.run("DELETE FROM t; DELETE FROM t") }
        // The statement that failed to bind is still usable with the right parameters.
        #expect(try database.run("INSERT INTO t VALUES (?, ?)", [.integer(1), .null]) == 1)
    }

    @Test func forEachRowStreamsAndStopsOnError() throws {
        let directory = try TemporaryDirectory()
        let database = try SQLiteDatabase(path: directory.path("cache.sqlite"))
        try database.execute("CREATE TABLE n (v INTEGER);")
        try database.transaction {
            for v in 1...10 { try database.run("INSERT INTO n VALUES (?)", [.integer(Int64(v))]) }
        }
        var seen: [Int64] = []
        #expect(throws: Abort.self) {
            try database.forEachRow("SELECT v FROM n WHERE v > ? ORDER BY v", [.integer(2)]) { row in
                seen.append(row[0].integer ?? -1)
                // The same SQL inside the callback runs on a statement of its own.
                #expect(try database.query("SELECT v FROM n WHERE v > ? ORDER BY v", [.integer(9)]).count == 1)
                if seen.count == 3 { throw Abort() }
            }
        }
        #expect(seen == [3, 4, 5])
        #expect(try database.query("SELECT v FROM n WHERE v > ? ORDER BY v", [.integer(8)]).count == 2)
    }

    @Test func rowsReadInPlaceGiveTheirBytesAndStopOnError() throws {
        let directory = try TemporaryDirectory()
        let database = try SQLiteDatabase(path: directory.path("cache.sqlite"))
        try database.execute("CREATE TABLE t (n INTEGER, s TEXT);")
        let texts: [String?] = ["", "plain", "寿司 🍣 \"q\" \\", "nul\u{0}inside", nil]
        for (n, text) in texts.enumerated() {
            try database.run("INSERT INTO t VALUES (?, ?)", [.integer(Int64(n)), text.map { .text($0) } ?? .null])
        }
        var read: [(Int64, [UInt8])] = []
        try database.forEachRowInPlace("SELECT n, s FROM t WHERE n >= ? ORDER BY n", [.integer(0)]) { row throws in
            #expect(row.count == 2)
            read.append((row.integer(0), Array(row.text(1))))
            // Another statement inside the callback leaves this row as it was.
            #expect(try database.query("SELECT count(*) FROM t").first?[0] == .integer(5))
            #expect(row.integer(0) == read.last!.0)
        }
        #expect(read.map(\.0) == [0, 1, 2, 3, 4])
        // Text as UTF-8 bytes, NUL and all; NULL as no bytes.
        #expect(read.map(\.1) == texts.map { Array(($0 ?? "").utf8) })
        var steps = 0
        #expect(throws: Abort.self) {
            try database.forEachRowInPlace("SELECT n FROM t ORDER BY n") { _ in
                steps += 1
                if steps == 2 { throw Abort() }
            }
        }
        #expect(steps == 2)
        #expect(throws: SQLiteError.self) { try database.forEachRowInPlace("SELECT nothing FROM t") { _ in } }
    }

    @Test func aNewFileGetsLargePagesAndAnOldOneKeepsItsOwn() throws {
        let directory = try TemporaryDirectory()
        let new = try SQLiteDatabase(path: directory.path("new.sqlite"))
        try new.execute("CREATE TABLE t (a);")
        #expect(try new.query("PRAGMA page_size").first?[0] == .integer(16_384))
        #expect(try new.query("PRAGMA journal_mode").first?[0] == .text("wal"))

        // A file written with SQLite's default 4 KB pages, as the cache was before, opens with its rows.
        let old = directory.path("old.sqlite")
        try new.run("ATTACH DATABASE ? AS old", [.text(old)])
        try new.execute("PRAGMA old.page_size = 4096; CREATE TABLE old.t (a); INSERT INTO old.t VALUES (1);")
        try new.execute("DETACH DATABASE old")
        let reopened = try SQLiteDatabase(path: old)
        #expect(try reopened.query("PRAGMA page_size").first?[0] == .integer(4_096))
        #expect(try reopened.query("SELECT a FROM t").first?[0] == .integer(1))
    }

    @Test func hundredThousandRowsInsertInOneTransaction() throws {
        let directory = try TemporaryDirectory()
        let database = try SQLiteDatabase(path: directory.path("cache.sqlite"))
        try database.execute(
            """
            CREATE TABLE offer (uuid TEXT NOT NULL, major INTEGER NOT NULL, minor INTEGER NOT NULL,
                                title TEXT NOT NULL, version INTEGER NOT NULL, PRIMARY KEY (uuid, major, minor));
            """)
        try database.transaction {
            for index in 0..<100_000 {
                try database.run(
                    "INSERT INTO offer (uuid, major, minor, title, version) VALUES (?, ?, ?, ?, ?)",
                    [
                        .text("8F0C1DDC-11E5-4A07-8910-425941B072F9"), .integer(Int64(index / 65_535)),
                        .integer(Int64(index % 65_535)), .text("offer \(index)"), .integer(Int64(index)),
                    ])
            }
        }
        #expect(
            try database.query("SELECT count(*), max(version) FROM offer").first?.values == [
                .integer(100_000), .integer(99_999),
            ])
    }
}
