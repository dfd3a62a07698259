import Foundation
import Postgres

/// One upgrade step, `migrations/NNNN-name.sql`: takes a database from version `version - 1` to `version`.
/// Its SQL runs inside the migration transaction, so it holds no BEGIN or COMMIT (nor anything that
/// cannot run in a transaction, such as CREATE INDEX CONCURRENTLY).
public struct SchemaMigration: Equatable, Sendable {
    public var version: Int
    public var name: String
    public var sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// Version 1, the first released schema: recorded, never run (schema.sql or that release made it).
    static let firstRelease = SchemaMigration(version: 1, name: "initial", sql: "")
}

/// The schema a binary runs on: `whole` (schema.sql) builds it on an empty database, `migrations` bring a
/// database made by any earlier release up to it. Version 1 is the first released schema, from before
/// databases recorded their version; every migration since adds one.
public struct DatabaseSchema: Sendable {
    public var whole: String
    public var migrations: [SchemaMigration]

    public init(whole: String, migrations: [SchemaMigration]) {
        self.whole = whole
        self.migrations = migrations
    }

    public var version: Int { migrations.last?.version ?? 1 }
}

/// What `Database.migrate` did.
public enum SchemaChange: Equatable, Sendable, CustomStringConvertible {
    /// The database was empty: schema.sql made it, and every version is recorded as applied.
    case created(version: Int)
    case migrated(from: Int, applied: [SchemaMigration])
    case current(version: Int)

    public var description: String {
        switch self {
        case .created(let version):
            "schema: created version \(version) on an empty database"
        case .migrated(let from, let applied):
            "schema: migrated version \(from) to \(applied.last?.version ?? from) ("
                + applied.map { String(format: "%04d-%@", $0.version, $0.name) }.joined(separator: ", ") + ")"
        case .current(let version):
            "schema: version \(version), nothing to migrate"
        }
    }
}

/// The database was migrated by a newer loyalty-server than this one: running on it could write rows that
/// the newer schema does not expect, so this binary refuses to start.
public struct SchemaTooNew: Error, Equatable, CustomStringConvertible {
    public var databaseVersion: Int
    public var binaryVersion: Int

    public var description: String {
        "the database's schema is version \(databaseVersion), newer than this loyalty-server knows "
            + "(\(binaryVersion)): run the loyalty-server release that migrated it, or a later one"
    }
}

extension Database {
    /// Brings the database to `schema`: every pending step in one transaction, under the advisory lock that
    /// makes concurrent starts (several instances, `loyalty-server migrate`) apply them once, one after
    /// the other. The same lock key as the first release's schema.sql, so an old and a new binary starting
    /// together wait for each other too.
    public func migrate(to schema: DatabaseSchema) throws -> SchemaChange {
        let now = clock()
        return try pool.withConnection { connection in
            try connection.transaction { connection in
                try connection.query("SELECT pg_advisory_xact_lock(4207333101)")
                let state = try connection.query(
                    """
                    SELECT to_regclass('schema_migrations') IS NOT NULL AS recorded,
                        to_regclass('catalog_feed') IS NOT NULL AS populated
                    """)[0]
                // The record table is the migrator's own, not part of schema.sql or of a migration.
                if !(try state.decode("recorded", as: Bool.self)) {
                    try connection.execute(
                        script: """
                            CREATE TABLE schema_migrations (
                                version integer PRIMARY KEY,
                                name text NOT NULL,
                                applied_at timestamptz NOT NULL
                            )
                            """)
                    guard try state.decode("populated", as: Bool.self) else {
                        try connection.execute(script: schema.whole)
                        try Self.record([.firstRelease] + schema.migrations, at: now, in: connection)
                        return .created(version: schema.version)
                    }
                    // Tables without a record: the first release made them.
                    try Self.record([.firstRelease], at: now, in: connection)
                }
                let applied = Set(
                    try connection.query("SELECT version FROM schema_migrations").map {
                        row throws(PostgresError) in try row.decode("version", as: Int.self)
                    })
                let newest = applied.max() ?? 1
                guard newest <= schema.version else {
                    throw SchemaTooNew(databaseVersion: newest, binaryVersion: schema.version)
                }
                let pending = schema.migrations.filter { !applied.contains($0.version) }
                for migration in pending {
                    try connection.execute(script: migration.sql)
                    if migration.name == "name-skeleton" { try Self.keyRetailerNames(connection) }
                }
                try Self.record(pending, at: now, in: connection)
                return pending.isEmpty ? .current(version: newest) : .migrated(from: newest, applied: pending)
            }
        }
    }

    /// migrations/0010's step that SQL cannot take: each retailer's name_key made again by `RetailerName.readingKey`
    /// (the confusable skeleton), oldest first; a name reading as an older one's keeps no key.
    private static func keyRetailerNames(_ connection: PostgresConnection) throws {
        var taken = Set<String>()
        for row in try connection.query("SELECT id, name FROM retailers ORDER BY created_at, id") {
            let key = RetailerName.readingKey(try row.decode("name", as: String.self))
            guard taken.insert(key).inserted else { continue }
            try connection.query("UPDATE retailers SET name_key = \(key) WHERE id = \(try row.decode("id", as: UUID.self))")
        }
    }

    private static func record(_ migrations: [SchemaMigration], at date: Date, in connection: PostgresConnection)
        throws
    {
        for migration in migrations {
            try connection.query(
                """
                INSERT INTO schema_migrations (version, name, applied_at)
                VALUES (\(migration.version), \(migration.name), \(date))
                """)
        }
    }
}
