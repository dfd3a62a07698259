/// SQL text plus its parameters. Built by interpolation (postgres-nio style), every interpolated value becomes a
/// bound parameter `$1`, `$2`... and never part of the SQL text:
///
///     try connection.query("SELECT id FROM offers WHERE retailer_id = \(retailerID)::uuid AND major = \(major)")
public struct PostgresQuery: Sendable, ExpressibleByStringInterpolation {
    public var sql: String
    /// Text-format values of `$1`, `$2`...; nil is SQL NULL.
    public var parameters: [String?]

    /// SQL the caller vouches for; values still go in `parameters`, never spliced into `sql`.
    public init(unsafeSQL sql: String, parameters: [String?] = []) {
        self.sql = sql
        self.parameters = parameters
    }

    public init(stringLiteral sql: String) {
        self.init(unsafeSQL: sql)
    }

    public init(stringInterpolation: StringInterpolation) {
        self.init(unsafeSQL: stringInterpolation.sql, parameters: stringInterpolation.parameters)
    }

    public struct StringInterpolation: StringInterpolationProtocol, Sendable {
        var sql = ""
        var parameters: [String?] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql.reserveCapacity(literalCapacity + 4 * interpolationCount)
            parameters.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            sql += literal
        }

        public mutating func appendInterpolation<T: PostgresEncodable>(_ value: T) {
            parameters.append(value.postgresText)
            sql += "$\(parameters.count)"
        }

        /// nil is SQL NULL. (Spelled out so that interpolating an Optional is not flagged as a debug description.)
        public mutating func appendInterpolation<T: PostgresEncodable>(_ value: T?) {
            parameters.append(value?.postgresText ?? nil)
            sql += "$\(parameters.count)"
        }
    }
}
