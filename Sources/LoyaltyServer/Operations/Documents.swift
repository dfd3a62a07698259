/// The repository's schema.sql, migrations/ and openapi.yaml, compiled in (see Package.swift), so the binary
/// needs no files beside it and cannot serve a contract other than the one it was built with.
public enum Documents {
    /// Every file of migrations/, in order (MigrationTests checks that none is missing).
    public static var schema: DatabaseSchema {
        DatabaseSchema(
            whole: String(decoding: PackageResources.schema_sql, as: UTF8.self),
            migrations: [
                SchemaMigration(
                    version: 2, name: "citus-fit", sql: String(decoding: PackageResources._002_citus_fit_sql, as: UTF8.self)),
                SchemaMigration(
                    version: 3, name: "feed-row-by-key",
                    sql: String(decoding: PackageResources._003_feed_row_by_key_sql, as: UTF8.self)),
                SchemaMigration(
                    version: 4, name: "till-and-console",
                    sql: String(decoding: PackageResources._004_till_and_console_sql, as: UTF8.self)),
                SchemaMigration(
                    version: 5, name: "key-rotation-grace",
                    sql: String(decoding: PackageResources._005_key_rotation_grace_sql, as: UTF8.self)),
                SchemaMigration(
                    version: 6, name: "beacon-fleet",
                    sql: String(decoding: PackageResources._006_beacon_fleet_sql, as: UTF8.self)),
                SchemaMigration(
                    version: 7, name: "hardening",
                    sql: String(decoding: PackageResources._007_hardening_sql, as: UTF8.self)),
                SchemaMigration(
                    version: 8, name: "till-idempotency",
                    sql: String(decoding: PackageResources._008_till_idempotency_sql, as: UTF8.self)),
            ])
    }
    public static var openAPI: [UInt8] { PackageResources.openapi_yaml }
}
