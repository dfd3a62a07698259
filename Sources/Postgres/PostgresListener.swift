internal import CLibPQ
import Foundation

/// A notification a listening connection received (NOTIFY or pg_notify).
public struct PostgresNotification: Equatable, Sendable {
    public var channel: String
    public var payload: String
}

/// A connection of its own that LISTENs and waits for notifications. Notifications come only from the server it
/// reached (a primary: standbys do not relay them), and only on a session that stays its own: never through
/// PgBouncer's transaction pooling. Not thread-safe: one thread waits on it.
public final class PostgresListener {
    private let connection: PostgresConnection

    /// Connects and LISTENs on `channels` (names made of letters, digits and underscores).
    public init(conninfo: String, channels: [String]) throws(PostgresError) {
        connection = try PostgresConnection(conninfo: conninfo)
        for channel in channels {
            guard !channel.isEmpty, channel.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
            else { throw PostgresError(kind: .sql, message: "a channel name is letters, digits and underscores") }
            try connection.query(PostgresQuery(unsafeSQL: "LISTEN \(channel)", parameters: []))
        }
    }

    /// Runs a statement on the listening session (a read that must follow the LISTEN, on the same server).
    public func query(_ query: PostgresQuery) throws(PostgresError) -> PostgresResult {
        try connection.query(query)
    }

    /// The server process of the session: what pg_terminate_backend names.
    public var backendPID: Int32 { PQbackendPID(connection.handle) }

    /// Waits up to `timeout` for notifications and returns those received (none when the time ran out). Throws
    /// `.unavailable` once the connection is lost: whatever was sent after then is unknown.
    public func notifications(waitingUpTo timeout: Duration) throws(PostgresError) -> [PostgresNotification] {
        let handle = connection.handle
        var received = drain()
        guard received.isEmpty else { return received }
        var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard connection.isHealthy, descriptor.fd >= 0 else { throw lost() }
        let ready = poll(&descriptor, 1, milliseconds)
        if ready < 0 && errno != EINTR { throw lost() }
        guard ready > 0 else { return [] }
        guard PQconsumeInput(handle) != 0, connection.isHealthy else { throw lost() }
        received = drain()
        return received
    }

    private func drain() -> [PostgresNotification] {
        var received: [PostgresNotification] = []
        while let notification = PQnotifies(connection.handle) {
            received.append(
                PostgresNotification(
                    channel: String(cString: notification.pointee.relname),
                    payload: String(cString: notification.pointee.extra)))
            PQfreemem(notification)
        }
        return received
    }

    private func lost() -> PostgresError {
        PostgresError(kind: .unavailable, message: "the listening connection was lost")
    }
}
