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
    private var waits = 0
    private var waiting = 0
    private var waited = Duration.zero
    /// How long a connection sits idle before its socket is looked at for a server gone meanwhile.
    static let idleBeforeCheck = Duration.milliseconds(10)

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

    /// Callers blocked now, waiting for a connection to come back.
    public var waitingCallers: Int {
        condition.lock()
        defer { condition.unlock() }
        return waiting
    }

    /// What the pool has done so far, read at one instant.
    public struct Usage: Sendable, Equatable {
        /// Connections handed out to callers now.
        public var inUse: Int
        /// Callers that found every connection in use and waited for one, since the pool was made.
        public var waits: Int
        /// The time those callers spent waiting, in total.
        public var waitSeconds: Double
    }

    public var usage: Usage {
        condition.lock()
        defer { condition.unlock() }
        let (seconds, attoseconds) = waited.components
        return Usage(inUse: checkedOut, waits: waits, waitSeconds: Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// Runs `body` with a connection of its own, waiting for one when all are in use.
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try body(connection)
    }

    private func checkOut() throws(PostgresError) -> PostgresConnection {
        condition.lock()
        if idle.isEmpty && open >= size {
            // The clock is read only by a caller that waits anyway: the common path stays free of it.
            let started = ContinuousClock.now
            waiting += 1
            repeat { condition.wait() } while idle.isEmpty && open >= size
            waiting -= 1
            waits += 1
            waited += ContinuousClock.now - started
        }
        checkedOut += 1
        let reused = idle.popLast()
        if reused == nil { open += 1 }  // reserve the slot, connect outside the lock
        condition.unlock()

        if let reused {
            // A server that went away while the connection sat idle said so on its socket: looked at only when it
            // sat long enough for that (a restart takes longer), not for every statement of a busy pool, where it
            // cost a poll(2) each, and the race it narrows is there anyway.
            if ContinuousClock.now - reused.idleSince > Self.idleBeforeCheck { reused.absorbUnsolicitedInput() }
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
        connection.idleSince = .now
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
