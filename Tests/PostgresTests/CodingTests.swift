import Foundation
import Postgres
import Testing

@Suite struct CodingTests {
    @Test func everyTypeRoundTripsThroughBoundParameters() throws {
        let connection = try freshDatabase()
        try connection.execute(
            script: """
                CREATE TABLE samples (
                    id serial PRIMARY KEY, text text, int int8, int64 int8, int32 int4, int16 int2, uint16 int4,
                    flag bool, real float8, uuid uuid, at timestamptz, bytes bytea);
                """)
        let injection = "Robert'); DROP TABLE samples; -- \"quoted\" ; \\ $1"
        let uuid = UUID()
        let at = Date(timeIntervalSince1970: 1_795_989_089.123456)
        let bytes = (0...255).map(UInt8.init)
        try connection.query(
            """
            INSERT INTO samples (text, int, int64, int32, int16, uint16, flag, real, uuid, at, bytes)
            VALUES (\(injection), \(Int.min), \(Int64.max), \(Int32.min), \(Int16.max), \(UInt16.max), \(true),
                    \(-0.1), \(uuid)::uuid, \(at), \(bytes))
            """)
        let nothing: String? = nil
        try connection.query(
            """
            INSERT INTO samples (text, int, int64, int32, int16, uint16, flag, real, uuid, at, bytes)
            VALUES (\(nothing), \(Int?.none), \(Int64?.none), \(Int32?.none), \(Int16?.none), \(UInt16?.none),
                    \(Bool?.none), \(Double?.none), \(UUID?.none)::uuid, \(Date?.none), \([UInt8]?.none))
            """)

        let rows = try connection.query("SELECT * FROM samples ORDER BY id")
        #expect(rows.count == 2)
        let full = rows[0]
        #expect(try full.decode("text", as: String.self) == injection)
        #expect(try full.decode("int", as: Int.self) == Int.min)
        #expect(try full.decode("int64", as: Int64.self) == Int64.max)
        #expect(try full.decode("int32", as: Int32.self) == Int32.min)
        #expect(try full.decode("int16", as: Int16.self) == Int16.max)
        #expect(try full.decode("uint16", as: UInt16.self) == UInt16.max)
        #expect(try full.decode("flag", as: Bool.self) == true)
        #expect(try full.decode("real", as: Double.self) == -0.1)
        #expect(try full.decode("uuid", as: UUID.self) == uuid)
        #expect(try full.decode("at", as: Date.self) == at)
        #expect(try full.decode("bytes", as: [UInt8].self) == bytes)
        #expect(try full.decode("int", as: Int?.self) == Int.min)

        let empty = rows[1]
        for column in ["text", "int", "int64", "int32", "int16", "uint16", "flag", "real", "uuid", "at", "bytes"] {
            #expect(empty[column] == nil, "\(column) should be NULL")
        }
        #expect(try empty.decode("text", as: String?.self) == nil)
        #expect(try empty.decode("at", as: Date?.self) == nil)
        let inferred: UUID? = try empty.decode("uuid")
        #expect(inferred == nil)
        #expect(throws: PostgresError.self) { try empty.decode("int", as: Int.self) }

        // The injection attempt stayed data: the table is still there with both rows.
        #expect(try connection.query("SELECT count(*) AS n FROM samples")[0].decode("n", as: Int.self) == 2)
    }

    @Test func textAndFloatsKeepTheirExactValues() throws {
        let connection = try freshDatabase()
        let texts = [
            "", "Grüße 🍣", "line\nbreak\ttab", "'", "\"", ";", "--", "$1", String(repeating: "x", count: 100_000),
        ]
        for text in texts {
            #expect(try connection.query("SELECT \(text)::text AS t")[0].decode("t", as: String.self) == text)
        }
        let doubles = [0, -0.0, 1e300, -1e-300, .pi, 0.1 + 0.2, .greatestFiniteMagnitude, .infinity, -.infinity]
        for double in doubles {
            let decoded = try connection.query("SELECT \(double)::float8 AS d")[0].decode("d", as: Double.self)
            #expect(decoded == double && decoded.sign == double.sign)
        }
        #expect(try connection.query("SELECT \(Double.nan)::float8 AS d")[0].decode("d", as: Double.self).isNaN)
    }

    @Test func datesKeepMicrosecondsInEverySessionTimeZone() throws {
        let connection = try freshDatabase()
        let dates = [
            Date(timeIntervalSince1970: 1_795_989_089.123456),
            Date(timeIntervalSince1970: -1_000_000_000.000001),
            Date(timeIntervalSince1970: 0),
            Date(timeIntervalSinceReferenceDate: 0.5),
        ]
        for zone in ["UTC", "Asia/Kolkata", "America/St_Johns", "Europe/Amsterdam"] {
            try connection.transaction { connection in
                try connection.query(PostgresQuery(unsafeSQL: "SET LOCAL TimeZone = '\(zone)'"))
                for date in dates {
                    let row = try connection.query("SELECT \(date)::timestamptz AS at")[0]
                    #expect(try row.decode("at", as: Date.self) == date, "\(zone): \(row["at"] ?? "NULL")")
                }
            }
        }
    }

    @Test func timestampTextParsesOffsetsAndRejectsNonsense() throws {
        let utc = try Date(postgresText: "2026-11-29 21:51:29.123456+00")
        #expect(utc.postgresText == "2026-11-29T21:51:29.123456Z")
        #expect(try Date(postgresText: "2026-11-30 03:21:29.123456+05:30") == utc)
        #expect(try Date(postgresText: "2026-11-29 21:51:29.123456Z") == utc)
        #expect(try Date(postgresText: "1900-01-01 00:53:28+00:53:28").postgresText == "1900-01-01T00:00:00.000000Z")
        #expect(try Date(postgresText: "2024-02-29").postgresText == "2024-02-29T00:00:00.000000Z")
        #expect(try Date(postgresText: "infinity") == .distantFuture)
        for nonsense in [
            "", "garbage", "2026-02-30 00:00:00+00", "2026-13-01", "2026-11-29 25:00:00", "2026-11-29 1:2:3",
            "2026-11-29 21:51:29.+00", "2026-11-29 21:51:29+00 junk",
        ] {
            #expect(throws: PostgresError.self, "\(nonsense)") { try Date(postgresText: nonsense) }
        }
    }

    /// The hand-written uuid coder against Foundation's and against PostgreSQL's own text.
    @Test func uuidTextMatchesFoundationAndPostgreSQL() throws {
        for _ in 0..<200 {
            let uuid = UUID()
            #expect(uuid.postgresText == uuid.uuidString.lowercased())
            #expect(try UUID(postgresText: uuid.uuidString.lowercased()) == uuid)
            #expect(try UUID(postgresText: uuid.uuidString) == uuid)
        }
        let connection = try freshDatabase()
        let uuid = UUID()
        let row = try connection.query("SELECT \(uuid)::uuid AS bound, \(uuid)::uuid::text AS printed")[0]
        #expect(try row.decode("bound", as: UUID.self) == uuid)
        #expect(try row.decode("printed", as: String.self) == uuid.postgresText)
        let malformed = [
            "", "0bc4e8a2-6d3c-4f6e-9a55-31b2e3a4f5c", "0bc4e8a26-d3c-4f6e-9a55-31b2e3a4f5c6",
            "0bc4e8a2-6d3c-4f6e-9a55-31b2e3a4f5g6", "0bc4e8a2-6d3c-4f6e-9a55-31b2e3a4f5c6 ", "0bc4e8a2+6d3c-4f6e-9a55-31b2e3a4f5c6",
        ]
        for text in malformed {
            #expect(throws: PostgresError.self, "\(text)") { try UUID(postgresText: text) }
        }
    }

    @Test func malformedValuesAreDecodingErrors() throws {
        let connection = try freshDatabase()
        let row = try connection.query("SELECT 'x'::text AS word, 70000 AS big, NULL::int AS nothing")[0]
        let attempts: [() throws -> Void] = [
            { _ = try row.decode("word", as: Int.self) },
            { _ = try row.decode("big", as: Int16.self) },
            { _ = try row.decode("word", as: UUID.self) },
            { _ = try row.decode("word", as: Bool.self) },
            { _ = try row.decode("word", as: [UInt8].self) },
            { _ = try row.decode("nothing", as: Int.self) },
            { _ = try row.decode("missing", as: Int?.self) },
        ]
        for attempt in attempts {
            let error = #expect(throws: PostgresError.self) { try attempt() }
            #expect(error?.kind == .decoding)
        }
    }
}
