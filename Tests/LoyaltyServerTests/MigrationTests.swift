import Foundation
import LoyaltyAPI
import LoyaltyTesting
import Postgres
import Testing

@testable import LoyaltyServer

/// Schema migrations on the real PostgreSQL: a database made by the first release (Tests/Fixtures/schema-1.sql, an
/// exact copy of schema.sql at eb2e26f) is upgraded with its rows, and ends up like a fresh one.
@Suite struct MigrationTests {

    static func firstReleaseSchema() throws -> String {
        try String(
            contentsOf: Repository.root.appendingPathComponent("Tests/Fixtures/schema-1.sql"),
            encoding: .utf8)
    }

    /// A new database in the shared cluster, with its database access.
    static func emptyDatabase() throws -> (pool: PostgresPool, database: Database, conninfo: String) {
        let conninfo = try EmbeddedPostgres.shared().createDatabase(
            "migrate_\(UUID().uuidString.prefix(8).lowercased())")
        let pool = PostgresPool(conninfo: conninfo, size: 2)
        return (pool, Database(pool: pool, clock: { Date(timeIntervalSince1970: 1_800_000_000) }), conninfo)
    }

    @Test func everyMigrationFileIsEmbeddedInOrder() throws {
        let directory = Repository.root.appendingPathComponent("migrations")
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
        let (pool, database, _) = try Self.emptyDatabase()
        let schema = Documents.schema
        #expect(try database.migrate(to: schema) == .created(version: schema.version))
        #expect(try Self.recordedVersions(pool) == Array(1...schema.version))
        #expect(try database.migrate(to: schema) == .current(version: schema.version))
    }

    @Test func firstReleaseDatabaseIsRecognisedAsVersionOne() throws {
        let (pool, database, _) = try Self.emptyDatabase()
        try pool.withConnection { try $0.execute(script: try Self.firstReleaseSchema()) }
        let schema = Documents.schema
        let change = try database.migrate(to: schema)
        if schema.migrations.isEmpty {
            #expect(change == .current(version: 1))
        } else {
            #expect(change == .migrated(from: 1, applied: schema.migrations))
        }
        #expect(try Self.recordedVersions(pool) == Array(1...schema.version))
    }

    @Test func migratingTwiceChangesNothing() throws {
        let (pool, database, _) = try Self.emptyDatabase()
        try pool.withConnection { try $0.execute(script: try Self.firstReleaseSchema()) }
        _ = try database.migrate(to: Documents.schema)
        let before = try Self.structure(pool)
        #expect(try database.migrate(to: Documents.schema) == .current(version: Documents.schema.version))
        #expect(try Self.structure(pool) == before)
    }

    /// Two instances starting together on a first-release database: both start, the steps run once.
    @Test func concurrentStartsApplyEachStepOnce() async throws {
        let (pool, _, conninfo) = try Self.emptyDatabase()
        try pool.withConnection { try $0.execute(script: try Self.firstReleaseSchema()) }
        let changes = try await withThrowingTaskGroup(of: SchemaChange.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    try Database(pool: PostgresPool(conninfo: conninfo, size: 1), clock: { Date() })
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
        let (pool, database, _) = try Self.emptyDatabase()
        _ = try database.migrate(to: Documents.schema)
        let future = Documents.schema.version + 1
        _ = try pool.withConnection { connection in
            try connection.query(
                "INSERT INTO schema_migrations VALUES (\(future), 'from-a-later-release', now())")
        }
        #expect(throws: SchemaTooNew(databaseVersion: future, binaryVersion: Documents.schema.version)) {
            try database.migrate(to: Documents.schema)
        }
        let message = SchemaTooNew(databaseVersion: future, binaryVersion: Documents.schema.version).description
        #expect(message.contains("version \(future)") && message.contains("(\(Documents.schema.version))"))
    }

    /// What keeps schema.sql and migrations/ honest: both roads end at the same tables, columns,
    /// constraints, indexes, triggers and functions.
    @Test func freshAndMigratedDatabasesHaveTheSameStructure() throws {
        let fresh = try Self.emptyDatabase()
        _ = try fresh.database.migrate(to: Documents.schema)
        let migrated = try Self.emptyDatabase()
        try migrated.pool.withConnection { try $0.execute(script: try Self.firstReleaseSchema()) }
        _ = try migrated.database.migrate(to: Documents.schema)
        let freshStructure = try Self.structure(fresh.pool)
        let migratedStructure = try Self.structure(migrated.pool)
        #expect(freshStructure.count > 50)
        #expect(Set(freshStructure).symmetricDifference(migratedStructure).sorted() == [])
    }

    /// A first-release database with rows in every table, written through that schema, is migrated by the
    /// server's start: every row is kept, and the server serves them (a token, a retailer key, a link code and
    /// a cursor from before still work; limits count the redemptions from before).
    @Test func firstReleaseRowsAreKeptAndServed() throws {
        let matey = UUID()
        let (sushi, pizza, clothing, gone) = (UUID(), UUID(), UUID(), UUID())
        let (alice, bob, carol) = (UUID(), UUID(), UUID())
        let retailerKey = Secrets.token(prefix: retailerKeyPrefix)
        // The first release's device tokens: 32 random bytes, no account in them.
        let tokens = (0..<3).map { _ in Secrets.token(prefix: deviceTokenPrefix) }
        let linkCode = "K7M2Q9XP"
        let aliceRedemption = UUID()
        let then = Date(timeIntervalSince1970: 1_799_000_000)
        var before: [String: String] = [:]
        var countersBefore: [String] = []
        var generation = UUID()
        let server = try TestServer(setUp: { pool in
            try pool.withConnection { connection in
                try connection.execute(script: try Self.firstReleaseSchema())
                try connection.query(
                    """
                    INSERT INTO retailers (id, name, uuid, api_key_hash, created_at)
                    VALUES (\(matey), 'Matey''s', '8F0C1DDC-11E5-4A07-8910-425941B072F9',
                        \(Secrets.digest(of: retailerKey)), \(then))
                    """)
                // Versions 2-5; then the tombstone (6), two stores (7, 8) and a removed store (9).
                try connection.query(
                    """
                    INSERT INTO offers (id, retailer_id, major, minor, title, per_shopper_limit, total_limit,
                        redeemed_count, updated_at)
                    VALUES (\(sushi), \(matey), 1, 1, '30% off sushi', 1, NULL, 1, \(then)),
                        (\(pizza), \(matey), 1, 2, 'Pizza: buy one get one free', 1, 2, 2, \(then)),
                        (\(clothing), \(matey), 2, 1, '50% off ladies'' clothing', 5, NULL, 0, \(then)),
                        (\(gone), \(matey), 2, 2, 'Gone', 1, NULL, 0, \(then))
                    """)
                try connection.query("UPDATE offers SET deleted_at = \(then) WHERE id = \(gone)")
                try connection.query(
                    """
                    INSERT INTO stores (retailer_id, store_id, name, latitude, longitude, radius_m, updated_at)
                    VALUES (\(matey), 'docks', 'Matey''s Docks', 51.5, -0.1, 150, \(then)),
                        (\(matey), 'old', 'Old Town', 51.4, -0.2, 100, \(then))
                    """)
                try connection.query("UPDATE stores SET deleted_at = \(then) WHERE store_id = 'old'")
                try connection.query(
                    """
                    INSERT INTO accounts (id, created_at, seen_version)
                    VALUES (\(alice), \(then), 1), (\(bob), \(then), 0), (\(carol), \(then), 0)
                    """)
                for (account, token) in zip([alice, bob, carol], tokens) {
                    try connection.query(
                        """
                        INSERT INTO devices (account_id, name, token_hash, created_at)
                        VALUES (\(account), 'phone', \(Secrets.digest(of: token)), \(then))
                        """)
                }
                try connection.query(
                    """
                    INSERT INTO link_codes (code_hash, account_id, expires_at)
                    VALUES (\(Secrets.digest(of: linkCode)), \(alice), \(then.addingTimeInterval(10 * 86_400 * 365)))
                    """)
                try connection.query(
                    """
                    INSERT INTO seen (account_id, offer_id, seen_at, version)
                    VALUES (\(alice), \(sushi), \(then), 1), (\(alice), \(clothing), \(then), 1)
                    """)
                try connection.query(
                    """
                    INSERT INTO redemptions (id, account_id, offer_id, code, idempotency_key, created_at)
                    VALUES (\(aliceRedemption), \(alice), \(sushi), 'SUSHI23456', 'alice-1', \(then)),
                        (gen_random_uuid(), \(bob), \(pizza), 'PIZZA23456', NULL, \(then)),
                        (gen_random_uuid(), \(carol), \(pizza), 'PIZZA34567', 'carol-1', \(then))
                    """)
                countersBefore = try connection.query(
                    "SELECT id, redeemed_count FROM offers WHERE redeemed_count > 0 ORDER BY id"
                ).map { row throws(PostgresError) in
                    "\(try row.decode("id", as: UUID.self)) \(try row.decode("redeemed_count", as: Int.self))"
                }
                generation = try connection.query("SELECT generation FROM catalog_feed")[0].decode("generation")
            }
            before = try Self.firstReleaseRows(pool)
        })
        #expect(server.schemaChange == .migrated(from: 1, applied: Documents.schema.migrations))
        #expect(before.values.allSatisfy { $0 != "[]" })
        #expect(try Self.firstReleaseRows(server.pool) == before)
        let countersAfter = try server.pool.withConnection { connection in
            try connection.query("SELECT offer_id, redeemed_count FROM redemption_totals ORDER BY offer_id").map {
                row throws(PostgresError) in
                "\(try row.decode("offer_id", as: UUID.self)) \(try row.decode("redeemed_count", as: Int.self))"
            }
        }
        #expect(countersAfter == countersBefore && countersAfter.count == 2)

        let aliceToken = tokens[0]
        let catalog = try server.request("GET", "/v1/catalog", token: aliceToken)
        #expect(catalog.status == 200)
        let page: CatalogPage = try catalog.decode()
        #expect(Set(page.offers.map(\.id)) == [sushi, pizza, clothing])
        #expect(page.stores.map(\.storeID) == ["docks"])
        // A cursor a client took before the upgrade: the delta since holds the tombstones after it.
        let delta: CatalogPage = try server.request(
            "GET", "/v1/catalog?since=\(FeedCursor(generation: generation, version: 5).encoded())", token: aliceToken
        ).decode()
        #expect(delta.removed.map(\.id) == [gone] && delta.removedStores.count == 1)

        let seen: SeenPage = try server.request("GET", "/v1/seen", token: aliceToken).decode()
        #expect(Set(seen.items.map(\.offerID)) == [sushi, clothing])

        // Limits count the redemptions from before: Alice's sushi, Bob's and Carol's pizzas (total 2).
        #expect(try server.request("POST", "/v1/redemptions", token: aliceToken, json: RedemptionRequest(offerID: sushi))
            .errorCode == .limitReached)
        #expect(try server.request("POST", "/v1/redemptions", token: aliceToken, json: RedemptionRequest(offerID: pizza))
            .errorCode == .limitReached)
        let replay = try server.request(
            "POST", "/v1/redemptions", token: aliceToken, json: RedemptionRequest(offerID: sushi),
            headers: ["Idempotency-Key": "alice-1"])
        #expect(replay.headers["idempotent-replayed"] == "true")
        #expect(try replay.decode(Redemption.self).id == aliceRedemption)
        #expect(
            try server.request("POST", "/v1/redemptions", token: aliceToken, json: RedemptionRequest(offerID: clothing))
                .status == 201)
        let mine: RedemptionList = try server.request("GET", "/v1/redemptions", token: aliceToken).decode()
        #expect(Set(mine.redemptions.map(\.offerID)) == [sushi, clothing])

        let statistics: RetailerStatistics = try server.request("GET", "/v1/retailer/stats", token: retailerKey).decode()
        #expect(statistics.offers.map(\.redemptions) == [1, 2, 1])
        #expect(statistics.offers.map(\.seenBy) == [1, 0, 1])
        #expect(statistics.offers.map(\.remaining) == [nil, 0, nil])

        // The link code from before gives a device of the same account, with a token that names it.
        let linked = try server.request("POST", "/v1/devices", json: DeviceRegistration(code: linkCode, name: "tablet"))
        #expect(linked.status == 201)
        let credentials: DeviceCredentials = try linked.decode()
        #expect(credentials.accountID == alice && DeviceToken.accountID(in: credentials.deviceToken) == alice)
        let seenOnTablet: SeenPage = try server.request("GET", "/v1/seen", token: credentials.deviceToken).decode()
        #expect(seenOnTablet.items == seen.items)
        #expect(try server.request("GET", "/v1/catalog", token: tokens[1]).status == 200)

        // The name from before has its skeleton key (0010): a look-alike of it is refused.
        let lookAlike = try server.request(
            "POST", "/v1/retailers", token: server.operatorToken, json: RetailerRegistration(name: "M\u{0430}tey\u{2019}s"))
        #expect(lookAlike.status == 409 && lookAlike.errorCode == .nameTaken, "\(lookAlike.text)")
    }

    /// Each first-release table's rows in the first release's columns (the counter, which moved, apart).
    static func firstReleaseRows(_ pool: PostgresPool) throws -> [String: String] {
        let columns = [
            "catalog_feed": "generation, version, purged_through",
            "retailers": "id, name, uuid, api_key_hash, created_at, version",
            "offers": """
                id, retailer_id, major, minor, title, description, category, image_url, starts_at, ends_at,
                per_shopper_limit, total_limit, reshow_after_s, updated_at, deleted_at, version
                """,
            "stores": "id, retailer_id, store_id, name, latitude, longitude, radius_m, updated_at, deleted_at, version",
            "accounts": "id, created_at, seen_version",
            "devices": "id, account_id, name, token_hash, created_at, revoked_at",
            "link_codes": "code_hash, account_id, expires_at, used_at",
            "seen": "account_id, offer_id, seen_at, version",
            "redemptions": "id, account_id, offer_id, code, idempotency_key, created_at",
        ]
        return try pool.withConnection { connection in
            try columns.reduce(into: [:]) { rows, table in
                // Names from the list above, not from input.
                rows[table.key] = try connection.query(
                    PostgresQuery(
                        unsafeSQL: """
                            SELECT coalesce(json_agg(t ORDER BY t::text), '[]')::text AS rows
                            FROM (SELECT \(table.value) FROM \(table.key)) t
                            """)
                )[0].decode("rows", as: String.self)
            }
        }
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
