/// The repository's schema.sql and openapi.yaml, compiled in (see Package.swift), so the binary
/// needs no files beside it and cannot serve a contract other than the one it was built with.
public enum Documents {
    public static var schema: String { String(decoding: PackageResources.schema_sql, as: UTF8.self) }
    public static var openAPI: [UInt8] { PackageResources.openapi_yaml }
}
