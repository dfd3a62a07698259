import Foundation
import Postgres
import Testing

@testable import LoyaltyServer

/// The Citus plan of docs/SCALING.md against the schema, from pg_catalog (Citus itself does not run here):
/// the rules Citus enforces when a table is distributed, checked before anyone tries.
@Suite struct CitusPlanTests {
    /// Copied to every node: read everywhere (catalog pages, joins from shopper tables), written rarely.
    static let referenceTables: Set<String> = [
        "catalog_feed", "retailers", "offers", "stores", "till_keys", "console_sessions", "beacons",
        "offer_import_rows", "secure_beacons",
    ]
    /// The migrator's record, on the coordinator only.
    static let localTables: Set<String> = ["schema_migrations"]
    /// Table: its distribution column and co-location group.
    static let distributedTables: [String: (column: String, group: String)] = [
        "accounts": ("id", "account"),
        "devices": ("account_id", "account"),
        "seen": ("account_id", "account"),
        "redemptions": ("account_id", "account"),
        "verified_sightings": ("account_id", "account"),
        "account_preferences": ("account_id", "account"),
        "muted_retailers": ("account_id", "account"),
        "offer_day_shows": ("account_id", "account"),
        "link_codes": ("code_hash", "link code"),
        "redemption_totals": ("offer_id", "offer"),
        "seen_folds": ("offer_id", "offer"),
        "seen_day_folds": ("retailer_id", "retailer"),
        "beacon_telemetry": ("retailer_id", "retailer"),
    ]

    @Test func theSchemaFitsThePlan() throws {
        let database = try MigrationTests.emptyDatabase()
        _ = try database.database.migrate(to: Documents.schema)
        let tables = try Self.tables(database.pool)
        #expect(tables.count == Self.referenceTables.count + Self.localTables.count + Self.distributedTables.count)
        for table in tables {
            #expect(
                Self.referenceTables.contains(table) || Self.localTables.contains(table)
                    || Self.distributedTables[table] != nil, "\(table) has no place in the plan")
        }
        #expect(try Self.violations(database.pool) == [])
    }

    /// The checks can fail: the first release's schema broke the plan where migration 0002 changed it.
    @Test func theFirstReleaseSchemaBrokeThePlan() throws {
        let database = try MigrationTests.emptyDatabase()
        try database.pool.withConnection { try $0.execute(script: try MigrationTests.firstReleaseSchema()) }
        #expect(
            try Self.violations(database.pool) == [
                "devices: devices_pkey (id) lacks account_id",
                "devices: devices_token_hash_key (token_hash) lacks account_id",
                "link_codes -> accounts: not co-located (link code, account)",
                "redemptions: redemptions_pkey (id) lacks account_id",
            ])
    }

    static func tables(_ pool: PostgresPool) throws -> [String] {
        try pool.withConnection { connection in
            try connection.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").map {
                row throws(PostgresError) in try row.decode("tablename", as: String.self)
            }
        }
    }

    /// What Citus would refuse: a unique index (primary keys and unique constraints included) of a
    /// distributed table without its distribution column; a foreign key between distributed tables that
    /// are not co-located or do not join distribution column to distribution column; a foreign key from a
    /// reference table to a distributed one; a co-location group whose columns differ in type.
    static func violations(_ pool: PostgresPool) throws -> [String] {
        var found: [String] = []
        try pool.withConnection { connection in
            let uniqueIndexes = try connection.query(
                """
                SELECT i.indexrelid::regclass::text AS index, i.indrelid::regclass::text AS "table",
                    (SELECT string_agg(a.attname, ',' ORDER BY k.position)
                        FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k (number, position)
                        JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.number) AS columns
                FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
                WHERE i.indisunique AND c.relnamespace = 'public'::regnamespace
                """)
            for row in uniqueIndexes {
                let table: String = try row.decode("table")
                guard let distribution = distributedTables[table] else { continue }
                let columns = try row.decode("columns", as: String.self).split(separator: ",").map(String.init)
                if !columns.contains(distribution.column) {
                    found.append(
                        "\(table): \(try row.decode("index", as: String.self)) (\(columns.joined(separator: ", ")))"
                            + " lacks \(distribution.column)")
                }
            }
            let foreignKeys = try connection.query(
                """
                SELECT c.conrelid::regclass::text AS source, c.confrelid::regclass::text AS target,
                    (SELECT string_agg(a.attname || '=' || b.attname, ',')
                        FROM unnest(c.conkey, c.confkey) AS k (source, target)
                        JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.source
                        JOIN pg_attribute b ON b.attrelid = c.confrelid AND b.attnum = k.target) AS pairs
                FROM pg_constraint c WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace
                """)
            for row in foreignKeys {
                let source: String = try row.decode("source")
                let target: String = try row.decode("target")
                let pairs = try row.decode("pairs", as: String.self).split(separator: ",").map(String.init)
                switch (distributedTables[source], distributedTables[target]) {
                case (let from?, let to?):
                    if from.group != to.group {
                        found.append("\(source) -> \(target): not co-located (\(from.group), \(to.group))")
                    } else if !pairs.contains("\(from.column)=\(to.column)") {
                        found.append("\(source) -> \(target): does not join \(from.column) to \(to.column)")
                    }
                case (nil, _?):
                    found.append("\(source) -> \(target): a foreign key into a distributed table")
                case (_, nil):
                    if localTables.contains(source) || localTables.contains(target) {
                        found.append("\(source) -> \(target): a foreign key of a local table")
                    }
                }
            }
            let columnTypes = try connection.query(
                """
                SELECT table_name, column_name, data_type FROM information_schema.columns
                WHERE table_schema = 'public'
                """)
            var groupTypes: [String: Set<String>] = [:]
            for row in columnTypes {
                let table: String = try row.decode("table_name")
                if let distribution = distributedTables[table],
                    try row.decode("column_name", as: String.self) == distribution.column
                {
                    groupTypes[distribution.group, default: []].insert(try row.decode("data_type"))
                }
            }
            for (group, types) in groupTypes where types.count > 1 {
                found.append("co-location group \(group): distribution columns of types \(types.sorted())")
            }
        }
        return found.sorted()
    }
}
