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
    /// The five-character SQLSTATE, e.g. `SQLState.uniqueViolation`.
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

    public var isUniqueViolation: Bool { sqlState == SQLState.uniqueViolation }
    public var isForeignKeyViolation: Bool { sqlState == SQLState.foreignKeyViolation }
    /// Class 22, data exception: a value the statement cannot take (out of range, bad text, NUL byte).
    public var isDataException: Bool { sqlState?.hasPrefix(SQLState.dataExceptionClass) == true }

    /// The SQLSTATE codes this package tells apart, named as in PostgreSQL's errcodes.txt.
    public enum SQLState {
        public static let uniqueViolation = "23505"
        public static let foreignKeyViolation = "23503"
        public static let characterNotInRepertoire = "22021"
        public static let inFailedSQLTransaction = "25P02"
        public static let readOnlySQLTransaction = "25006"
        public static let duplicateDatabase = "42P04"
        public static let syntaxError = "42601"
        public static let adminShutdown = "57P01"
        public static let crashShutdown = "57P02"
        public static let cannotConnectNow = "57P03"
        /// statement_timeout or a cancel request stopped the statement.
        public static let queryCanceled = "57014"
        /// The first two characters of a code are its class.
        public static let dataExceptionClass = "22"
        public static let connectionExceptionClass = "08"
    }

    public var description: String {
        switch kind {
        case .unavailable: "PostgreSQL unavailable: \(message)"
        case .sql: "PostgreSQL error \(sqlState ?? "?????"): \(message)"
        case .decoding: "PostgreSQL decoding error: \(message)"
        case .launcher: "embedded PostgreSQL: \(message)"
        }
    }
}
