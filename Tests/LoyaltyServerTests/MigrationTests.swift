import Foundation
import LoyaltyAPI
import Postgres
import Testing

@testable import LoyaltyServer

/// Schema migrations on the real PostgreSQL: a database made by the first release (Fixtures/schema-1.sql, an
/// exact copy of schema.sql at eb2e26f) is upgraded with its rows, and ends up like a fresh one.
@Suite struct MigrationTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func firstReleaseSchema() throws -> String {
        try String(
            contentsOf: repository.appendingPathComponent("Tests/LoyaltyServerTests/Fixtures/schema-1.sql"),
            encoding: .utf8)
    }

    /// A new database in the shared cluster, with its store.
    static func emptyDatabase() throws -> (pool: PostgresPool, store: Store, conninfo: String) {
        let conninfo = try EmbeddedPostgres.shared().createDatabase(
            "migrate_\(UUID().uuidString.prefix(8).lowercased())")
        let pool = PostgresPool(conninfo: conninfo, size: 2)
        return (pool, Store(pool: pool, clock: { Date(timeIntervalSince1970: 1_800_000_000) }), conninfo)
    }

    @Test func everyMigrationFileIsEmbeddedInOrder() throws {
        let directory = Self.repository.appendingPathComponent("migrations")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".sql") }.sorted()
        let embedded = Documents.schema.migrations
        #expect(files == embedded.map { String(format: "%04d-%@.sql", $0.version, $0.name) })
        for (file, migration) in zip(files, embedded) {
            #expect(try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8) == migration.sql)
        }
        #expect(embedded.map(\.version) == Array((0..<embedded.count).map { $0 + 2 }))
    }

    @Test func freshDatabaseGetsTheWholeSchemaAndRecordsEveryVersion() throws {
        let (pool, store, _) = try Self.emptyDatabase()
        let schema = Documents.schema
        #expect(try store.migrate(to: schema) == .created(version: schema.version))
        #expect(try Self.recordedVersions(pool) == Array(1...schema.version))
        #expect(try store.migrate(to: schema) == .current(version: schema.version))
    }

    @Test func firstReleaseDatabaseIsRecognisedAsVersionOne() throws {
        let (pool, store, _) = try Self.emptyDatabase()
        try pool.withConnection { try $0.execute(script: try Self.firstReleaseSchema()) }
        let schema = Documents.schema
        let change = try store.migrate(to: schema)
        if schema.migrations.isEmpty {
            #expect(change == .current(version: 1))
        } else {
            #expect(change == .migrated(from: 1, applied: schema.migrations))
        }
        #expect(try Self.recordedVersions(pool) == Array(1...schema.version))
    }

    @Test func migratingTwiceChangesNothing() throws {
        let (pool, store, _) = try Self.emptyDatabase()
        try pool.withConnection { try $0.execute(script: try Self.firstReleaseSchema()) }
        _ = try store.migrate(to: Documents.schema)
        let before = try Self.structure(pool)
        #expect(try store.migrate(to: Documents.schema) == .current(version: Documents.schema.version))
        #expect(try Self.structure(pool) == before)
    }

    /// Two instances starting together on a first-release database: both start, the steps run once.
    @Test func concurrentStartsApplyEachStepOnce() async throws {
        let (pool, _, conninfo) = try Self.emptyDatabase()
        try pool.withConnection { try $0.execute(script: try Self.firstReleaseSchema()) }
        let changes = try await withThrowingTaskGroup(of: SchemaChange.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    try Store(pool: PostgresPool(conninfo: conninfo, size: 1), clock: { Date() })
                        .migrate(to: Documents.schema)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let upgrades = changes.filter { $0 != .current(version: Documents.schema.version) }
        #expect(upgrades.count == (Documents.schema.migrations.isEmpty ? 0 : 1))
        #expect(try Self.recordedVersions(pool) == Array(1...Documents.schema.version))
    }

    @Test func schemaNewerThanTheBinaryRefusesToStart() throws {
        let (pool, store, _) = try Self.emptyDatabase()
        _ = try store.migrate(to: Documents.schema)
        let future = Documents.schema.version + 1
        _ = try pool.withConnection { connection in
            try connection.query(
                "INSERT INTO schema_migrations VALUES (\(future), 'from-a-later-release', now())")
        }
        #expect(throws: SchemaTooNew(databaseVersion: future, binaryVersion: Documents.schema.version)) {
            try store.migrate(to: Documents.schema)
        }
        let message = SchemaTooNew(databaseVersion: future, binaryVersion: Documents.schema.version).description
        #expect(message.contains("version \(future)") && message.contains("(\(Documents.schema.version))"))
    }

    /// What keeps schema.sql and migrations/ honest: both roads end at the same tables, columns,
    /// constraints, indexes, triggers and functions.
    @Test func freshAndMigratedDatabasesHaveTheSameStructure() throws {
        let fresh = try Self.emptyDatabase()
        _ = try fresh.store.migrate(to: Documents.schema)
        let migrated = try Self.emptyDatabase()
        try migrated.pool.withConnection { try $0.execute(script: try Self.firstReleaseSchema()) }
        _ = try migrated.store.migrate(to: Documents.schema)
        let freshStructure = try Self.structure(fresh.pool)
        let migratedStructure = try Self.structure(migrated.pool)
        #expect(freshStructure.count > 50)
        #expect(Set(freshStructure).symmetricDifference(migratedStructure).sorted() == [])
    }

    static func recordedVersions(_ pool: PostgresPool) throws -> [Int] {
        try pool.withConnection { connection in
            try connection.query("SELECT version FROM schema_migrations ORDER BY version").map {
                row throws(PostgresError) in try row.decode("version", as: Int.self)
            }
        }
    }

    /// The public schema's definitions from the catalogs, one line each, independent of column order.
    static func structure(_ pool: PostgresPool) throws -> [String] {
        let queries: [PostgresQuery] = [
            """
            SELECT concat_ws(' ', 'column', table_name, column_name, data_type, is_nullable, column_default) AS line
            FROM information_schema.columns WHERE table_schema = 'public'
            """,
            """
            SELECT concat_ws(' ', 'constraint', conrelid::regclass::text, conname, pg_get_constraintdef(oid)) AS line
            FROM pg_constraint WHERE connamespace = 'public'::regnamespace
            """,
            "SELECT concat_ws(' ', 'index', indexname, indexdef) AS line FROM pg_indexes WHERE schemaname = 'public'",
            """
            SELECT concat_ws(' ', 'trigger', pg_get_triggerdef(oid)) AS line FROM pg_trigger
            WHERE NOT tgisinternal
            """,
            """
            SELECT concat_ws(' ', 'function', pg_get_functiondef(oid)) AS line FROM pg_proc
            WHERE pronamespace = 'public'::regnamespace
            """,
        ]
        return try pool.withConnection { connection in
            try queries.flatMap { query in
                try connection.query(query).map { row throws(PostgresError) in try row.decode("line", as: String.self) }
            }
        }.sorted()
    }
}
