import Foundation

/// Sends reads to streaming standbys (the server's DATABASE_REPLICA_URL) while one is fit for them, and to the
/// primary otherwise: a standby is fit when it is in recovery (`pg_is_in_recovery()`) and its replay is at most
/// `maxLag` seconds behind what it has received. Each connection's standing is checked at most once a second,
/// in a statement of its own before the read, so the read's snapshot is at least as new as the check.
///
/// A read that needs more than the standby has replayed (a client's cursor newer than the standby's copy)
/// throws `StandbyBehind` or is refused by `acceptable`, and runs again on the primary: read-your-writes by the
/// cursor, whichever server handed it out (docs/SCALING.md, "Reads on standbys").
public final class StandbyReads: @unchecked Sendable {  // mutable state is guarded by `lock`
    /// Why a read went to the primary although standbys are configured.
    public enum Fallback: String, CaseIterable, Sendable {
        /// No standby could be reached (for `retryInterval` after a failure, none is tried).
        case unreachable
        /// The replica URL reached a server that is not in recovery: a primary, whose rows may not be ours.
        case notStandby = "not_standby"
        /// The standby replays more than `maxLag` behind what it received.
        case lagging
        /// The standby had not yet replayed what the read needs.
        case behind
    }

    /// A change in where reads go, for the log: every standby read after it goes the same way until the next.
    public enum Event: Sendable, Equatable {
        case standbyInUse(server: String)
        case fallingBack(Fallback, server: String?, detail: String)
    }

    public struct Usage: Sendable, Equatable {
        public var standbyReads: Int
        public var primaryReads: [Fallback: Int]
        /// Each standby server's replay lag when last checked, in seconds (nil: not known).
        public var lagSeconds: [String: Double?]
    }

    public let maxLag: Double
    private let primary: PostgresPool
    private let standbys: PostgresPool
    private let log: @Sendable (Event) -> Void
    private let lock = NSLock()
    private var standbyReads = 0
    private var primaryReads: [Fallback: Int] = [:]
    private var lagSeconds: [String: Double?] = [:]
    private var lastEvent: Event?
    /// After a standby could not be reached, reads go straight to the primary until then: a blackholed host
    /// would otherwise cost every read its connect timeout.
    private var skipStandbysUntil: ContinuousClock.Instant?

    static let statusLifetime = Duration.seconds(1)
    static let retryInterval = Duration.seconds(2)

    public init(
        primary: PostgresPool, standbys: PostgresPool, maxLag: Double, log: @escaping @Sendable (Event) -> Void
    ) {
        self.primary = primary
        self.standbys = standbys
        self.maxLag = maxLag
        self.log = log
    }

    public var usage: Usage {
        lock.lock()
        defer { lock.unlock() }
        return Usage(standbyReads: standbyReads, primaryReads: primaryReads, lagSeconds: lagSeconds)
    }

    /// Whether a standby fit for reads answers now (not counted as a read).
    public func standbyIsFit() -> Bool {
        (try? standbys.withConnection { try unfitness(of: $0) == nil }) ?? false
    }

    /// Runs `body` on a fit standby and returns its answer when `acceptable`; else (and when `body` throws
    /// `StandbyBehind`, or the standby fails under it) runs it on the primary.
    public func read<T>(acceptable: (T) -> Bool = { _ in true }, _ body: (PostgresConnection) throws -> T) throws -> T {
        switch tryStandby(acceptable: acceptable, body) {
        case .success(let value): return value
        case .failure(let reason): count(reason)
        }
        return try primary.withConnection(body)
    }

    private enum Outcome<T> {
        case success(T)
        case failure(Fallback)
    }

    /// The standby's answer, or why the primary must give it (unreachable while standbys are skipped after a
    /// failure).
    private func tryStandby<T>(acceptable: (T) -> Bool, _ body: (PostgresConnection) throws -> T) -> Outcome<T> {
        lock.lock()
        let skipping = skipStandbysUntil.map { ContinuousClock.now < $0 } ?? false
        lock.unlock()
        if skipping { return .failure(.unreachable) }
        do {
            return try standbys.withConnection { connection -> Outcome<T> in
                if let unfit = try unfitness(of: connection) { return .failure(unfit) }
                let value = try body(connection)
                guard acceptable(value) else { return .failure(.behind) }
                lock.lock()
                standbyReads += 1
                lock.unlock()
                note(.standbyInUse(server: connection.server))
                return .success(value)
            }
        } catch is StandbyBehind {
            return .failure(.behind)
        } catch let error as PostgresError where error.kind == .unavailable {
            lock.lock()
            skipStandbysUntil = ContinuousClock.now + Self.retryInterval
            lock.unlock()
            note(.fallingBack(.unreachable, server: nil, detail: error.description))
            return .failure(.unreachable)
        } catch {
            // It failed under the read (a standby cancels queries that conflict with its replay, 40001): the
            // primary answers instead. An error of the read itself recurs there and is thrown.
            return .failure(.unreachable)
        }
    }

    /// Why `connection` may not serve reads now, or nil when it may; checks its server when the last check is old.
    private func unfitness(of connection: PostgresConnection) throws -> Fallback? {
        let now = ContinuousClock.now
        let status: StandbyStatus
        if let known = connection.standbyStatus, now - known.checkedAt < Self.statusLifetime {
            status = known
        } else {
            // The standby's own view: replay behind receipt, measured by the last replayed commit's time. A
            // standby that has replayed all it received counts as current, as it does while the primary is
            // gone, so that reads go on during a failover.
            let row = try connection.query(
                """
                SELECT pg_is_in_recovery() AS in_recovery,
                    CASE WHEN NOT pg_is_in_recovery()
                            OR pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0::float8
                        ELSE extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8
                    END AS lag
                """
            )[0]
            let inRecovery: Bool = try row.decode("in_recovery")
            // A connection reaches one server for its life: out of recovery after it was in, that server is our
            // standby promoted, and its rows are the cluster's newest.
            let wasStandby = connection.standbyStatus.map { $0.inRecovery || $0.promoted } ?? false
            status = StandbyStatus(
                checkedAt: now, inRecovery: inRecovery, promoted: !inRecovery && wasStandby,
                lagSeconds: try row.decode("lag", as: Double?.self))
            connection.standbyStatus = status
            lock.lock()
            lagSeconds[connection.server] = status.inRecovery ? status.lagSeconds : nil
            lock.unlock()
        }
        if !status.inRecovery && !status.promoted {
            note(
                .fallingBack(
                    .notStandby, server: connection.server,
                    detail: "DATABASE_REPLICA_URL reached a server that is not in recovery; reads go to the primary"))
            return .notStandby
        }
        guard let lag = status.lagSeconds, lag <= maxLag else {
            note(
                .fallingBack(
                    .lagging, server: connection.server,
                    detail: "replay is \(status.lagSeconds.map { "\(Int($0)) s" } ?? "an unknown time") behind, "
                        + "over the \(Int(maxLag)) s allowed; reads go to the primary"))
            return .lagging
        }
        return nil
    }

    private func count(_ fallback: Fallback) {
        lock.lock()
        primaryReads[fallback, default: 0] += 1
        lock.unlock()
    }

    /// Logs `event` when reads change course (the same server and reason again is not news).
    private func note(_ event: Event) {
        lock.lock()
        let changed = !Self.sameCourse(lastEvent, event)
        lastEvent = event
        lock.unlock()
        if changed { log(event) }
    }

    private static func sameCourse(_ last: Event?, _ next: Event) -> Bool {
        switch (last, next) {
        case (.standbyInUse(let a), .standbyInUse(let b)): a == b
        case (.fallingBack(let a, let serverA, _), .fallingBack(let b, let serverB, _)): a == b && serverA == serverB
        default: false
        }
    }
}

/// Thrown by a read on a standby that finds the standby older than what the caller already has (its cursor):
/// `StandbyReads` runs the read again on the primary.
public struct StandbyBehind: Error {
    public init() {}
}

extension PostgresConnection {
    /// Whether `StandbyReads` found this connection's server in recovery: a read that finds it older than the
    /// caller's cursor throws `StandbyBehind` rather than refusing the cursor. Never true on the primary's pool.
    public var isKnownStandby: Bool { standbyStatus?.inRecovery == true }
}

/// A server's standing as a standby, as `StandbyReads` last checked it on one connection.
struct StandbyStatus {
    var checkedAt: ContinuousClock.Instant
    var inRecovery: Bool
    /// Out of recovery since this connection saw it in recovery: a failover promoted it. Its reads go on until
    /// the balancer moves the connection (a read on a server just promoted would otherwise go to a primary that
    /// may not yet be reachable, and fail).
    var promoted: Bool
    var lagSeconds: Double?
}
