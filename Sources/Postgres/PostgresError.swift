/// An error from the database, from decoding a value, or from the embedded cluster's launcher.
///
/// `message` comes from the server or from this module, never from the connection string, so it is safe to log
/// and to show (libpq's own connection messages are scrubbed of the password before they get here).
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    public enum Kind: Sendable {
        /// The database cannot be reached or dropped the connection: retry later (HTTP 503).
        case unavailable
        /// The server rejected a statement; `sqlState` says why.
        case sql
        /// A value could not be converted to or from its text form.
        case decoding
        /// The embedded cluster could not be created, started or stopped.
        case launcher
    }

    public var kind: Kind
    /// The five-character SQLSTATE, e.g. "23505" for a unique violation.
    public var sqlState: String?
    public var message: String
    /// The constraint a violation names (PG_DIAG_CONSTRAINT_NAME), to tell apart which unique key was hit.
    public var constraintName: String?

    public init(kind: Kind, sqlState: String? = nil, message: String, constraintName: String? = nil) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.constraintName = constraintName
    }

    public var isUniqueViolation: Bool { sqlState == "23505" }

    public var description: String {
        switch kind {
        case .unavailable: "PostgreSQL unavailable: \(message)"
        case .sql: "PostgreSQL error \(sqlState ?? "?????"): \(message)"
        case .decoding: "PostgreSQL decoding error: \(message)"
        case .launcher: "embedded PostgreSQL: \(message)"
        }
    }
}
