import Postgres

extension PostgresQuery.StringInterpolation {
    /// Binds nil as NULL, like the generic overload; spelt out so the compiler does not warn that an
    /// optional is interpolated.
    mutating func appendInterpolation<T: PostgresEncodable>(_ value: T?) {
        let bound: some PostgresEncodable = value
        appendInterpolation(bound)
    }
}
