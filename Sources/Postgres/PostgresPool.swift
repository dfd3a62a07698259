import Foundation

/// A fixed-size pool. Connections open lazily; a caller blocks while all `size` are in use.
///
/// A broken connection is dropped and replaced on next use, so the pool recovers by itself after the database
/// restarts; while it is down, calls throw kind `.unavailable` quickly (connecting gives up after
/// `connect_timeout`, 2 s by default; a refused Unix socket or TCP port fails at once).
public final class PostgresPool: @unchecked Sendable {  // all mutable state is guarded by `condition`
    private let conninfo: String
    public let size: Int
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    /// Connections that exist or are being opened: idle ones plus those handed out.
    private var open = 0
    private var checkedOut = 0

    public init(conninfo: String, size: Int) {
        precondition(size > 0, "a pool needs at least one connection")
        self.conninfo = conninfo
        self.size = size
    }

    /// Connections currently handed out to callers.
    public var inUse: Int {
        condition.lock()
        defer { condition.unlock() }
        return checkedOut
    }

    /// Runs `body` with a connection of its own, waiting for one when all are in use.
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try body(connection)
    }

    private func checkOut() throws(PostgresError) -> PostgresConnection {
        condition.lock()
        while idle.isEmpty && open >= size {
            condition.wait()
        }
        checkedOut += 1
        let reused = idle.popLast()
        if reused == nil { open += 1 }  // reserve the slot, connect outside the lock
        condition.unlock()

        if let reused {
            reused.absorbUnsolicitedInput()
            if reused.isHealthy { return reused }
        }
        do {
            return try PostgresConnection(conninfo: conninfo)
        } catch {
            condition.lock()
            open -= 1
            checkedOut -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func checkIn(_ connection: PostgresConnection) {
        // A caller that left a transaction open (or a COPY running) must not hand it to the next one.
        if connection.isHealthy && !connection.isIdle {
            _ = try? connection.query("ROLLBACK")
        }
        let reusable = connection.isHealthy && connection.isIdle
        condition.lock()
        checkedOut -= 1
        if reusable {
            idle.append(connection)
        } else {
            // The server is likely gone or restarted: the idle connections share that fate, so drop them too.
            open -= 1 + idle.count
            idle.removeAll()
        }
        condition.signal()
        condition.unlock()
    }
}
