/// The repository's schema.sql, migrations/ and openapi.yaml, compiled in (see Package.swift), so the binary
/// needs no files beside it and cannot serve a contract other than the one it was built with.
public enum Documents {
    /// Every file of migrations/ (`NNNN-name.sql`), in order.
    public static var schema: DatabaseSchema {
        DatabaseSchema(
            whole: String(decoding: PackageResources.schema_sql, as: UTF8.self),
            migrations: migrationFiles.map { file in
                let parts = file.name.dropLast(".sql".count).split(separator: "-", maxSplits: 1)
                // A name that is not NNNN-name.sql gets version 0, which MigrationTests refuses.
                return SchemaMigration(
                    version: parts.first.flatMap { Int($0) } ?? 0, name: parts.count == 2 ? String(parts[1]) : "",
                    sql: String(decoding: file.sql, as: UTF8.self))
            })
    }
    public static var openAPI: [UInt8] { PackageResources.openapi_yaml }
}
