import Foundation
import LoyaltyAPI
import Postgres

/// What a catalog check (`GET /v1/catalog` or `/v1/directory` answered 304) needs, held in memory so that it costs
/// no database round trip: the feed's head and the device tokens seen lately (docs/SCALING.md). Kept current by
/// notifications on a connection of its own to the primary (`catalog_head`, `device_tokens`: schema.sql). It vouches
/// for nothing while that connection is down or being made again: until the head is read again after a new LISTEN,
/// every check goes to the database as before, and every token it held is forgotten. Nor while the connection takes the
/// LISTEN but delivers nothing (PgBouncer's transaction pooling): each new connection must first receive a probe.
/// Nor once it stops hearing the heartbeat sent it each second through the connection string writes go to: a listener left
/// on a server that stopped, or that no longer takes the writes after a failover, hears nothing and says nothing.
final class CatalogCheck: @unchecked Sendable {  // the state is guarded by `lock`
    private let lock = NSLock()
    /// The feed's head as read after the last LISTEN and each `catalog_head`; nil while not trusted.
    private var head: FeedCursor?
    /// Bumped whenever a token may have stopped being valid: a lookup begun before may not be remembered.
    private var epoch: UInt64 = 0
    private var tokens: LeastRecentlyUsed<[UInt8], DeviceSession>
    private var stopping = false
    private var started = false
    private var listenerPID: Int32?
    private var answeredFromMemory = 0
    /// Whether the last connection took the LISTEN but its probe never arrived.
    private var probeFailed = false
    /// When the listener last heard its own heartbeat (or was trusted anew): the cache vouches for a lease from it.
    private var heardAt = ContinuousClock.now
    private let conninfo: String
    /// Where the heartbeats are sent from: where the server's writes go (`DATABASE_URL`).
    private let heartbeatConninfo: String
    private let heartbeatPayload = "heartbeat " + UUID().uuidString
    private let log: @Sendable (String) -> Void
    private let done = DispatchSemaphore(value: 0)
    /// Broadcast by `stop`: the threads' sleeps end at once instead of waking to look.
    private let stopped = NSCondition()
    /// How long a new listening connection waits for its probe, and how long after a lost probe it tries again.
    static let probeTimeout: Duration = .seconds(2)
    static let probeRetry: Duration = .seconds(5)
    /// The channel each new listening connection is sent a random nonce on, and its heartbeats.
    static let probeChannel = "catalog_check_probe"
    /// How often the listener sends itself a heartbeat, and how long the cache vouches for anything after the last
    /// one it heard: well under the time a failover takes (Patroni's leader TTL, 30 s by default), so that no write
    /// on a new primary can meet a cache still listening to the old one.
    static let heartbeatInterval: Duration = .seconds(1)
    static let heartbeatLease: Duration = .seconds(5)

    /// Will listen on `conninfo` (the primary itself: not through PgBouncer's transaction pooling), holding up to
    /// `capacity` device tokens, and send it heartbeats through `heartbeatConninfo`, where the writes go.
    init(conninfo: String, heartbeatConninfo: String, capacity: Int, log: @escaping @Sendable (String) -> Void) {
        self.conninfo = conninfo
        self.heartbeatConninfo = heartbeatConninfo
        self.log = log
        tokens = LeastRecentlyUsed(capacity: max(1, capacity))
    }

    /// Starts listening, once the schema is migrated: on a new database a listener started before found no feed to
    /// read, and logged a failure and then its recovery.
    func start() {
        lock.withLock { started = true }
        let listening = Thread { [self] in listen() }
        listening.name = "catalog-check"
        listening.start()
        // A thread of its own: a send stuck on a frozen server must not stop the listener from giving up on it.
        // `stop` does not wait for it; it ends at its next beat.
        let beating = Thread { [self] in sendHeartbeats() }
        beating.name = "catalog-check-heartbeat"
        beating.start()
    }

    /// Stops listening (within a tenth of a second) and forgets everything.
    func stop() {
        let listening: Bool = lock.withLock {
            defer { stopping = true }
            return started && !stopping
        }
        stopped.lock()
        stopped.broadcast()
        stopped.unlock()
        if listening { done.wait() }
    }

    /// The feed's head, when the cache vouches for it and it is at least `version`, and the device session of a
    /// token known valid by its digest. nil: ask the database.
    func check(digest: [UInt8], atLeast version: Int64?) -> (head: FeedCursor, session: DeviceSession)? {
        lock.withLock {
            guard let head, ContinuousClock.now - heardAt < Self.heartbeatLease, head.version >= version ?? 0,
                let session = tokens[digest]
            else { return nil }
            answeredFromMemory += 1
            return (head, session)
        }
    }

    /// Its lines of /metrics.
    func exposition() -> String {
        let (trusted, tokens, answered, unheard) = lock.withLock {
            (head != nil, self.tokens.count, answeredFromMemory, self.probeFailed)
        }
        return """
            # HELP loyalty_catalog_check_listening 1 while the catalog check listens and answers from memory.
            # TYPE loyalty_catalog_check_listening gauge
            loyalty_catalog_check_listening \(trusted ? 1 : 0)
            # HELP loyalty_catalog_check_device_tokens Device tokens the catalog check holds in memory.
            # TYPE loyalty_catalog_check_device_tokens gauge
            loyalty_catalog_check_device_tokens \(tokens)
            # HELP loyalty_catalog_check_from_memory_total Catalog checks answered without the database.
            # TYPE loyalty_catalog_check_from_memory_total counter
            loyalty_catalog_check_from_memory_total \(answered)
            # HELP loyalty_catalog_check_probe_failed 1 while notifications do not reach the listener (a pooler).
            # TYPE loyalty_catalog_check_probe_failed gauge
            loyalty_catalog_check_probe_failed \(unheard ? 1 : 0)

            """
    }

    /// Where token changes stand now: what `remember` is given after a lookup in the database. nil while the cache
    /// vouches for nothing.
    var currentEpoch: UInt64? { lock.withLock { head == nil ? nil : epoch } }

    /// Keeps a session the primary found for a token's digest, unless a token may have stopped being valid since
    /// `epoch` (the lookup may have read it before).
    func remember(digest: [UInt8], _ session: DeviceSession, since epoch: UInt64) {
        lock.withLock {
            guard head != nil, self.epoch == epoch else { return }
            tokens[digest] = session
        }
    }

    /// Moves the head forward to `read` (another generation replaces it, unless `sameGenerationOnly`), while the cache
    /// vouches for it: heads read by the listener and after this server's own writes arrive in any order.
    func advance(to read: FeedCursor, sameGenerationOnly: Bool = false) {
        lock.withLock {
            guard let current = head else { return }
            if read.generation == current.generation ? read.version > current.version : !sameGenerationOnly {
                // The feed's head only: a page's cursor also carries its kind (near, part).
                head = FeedCursor(generation: read.generation, version: read.version)
            }
        }
    }

    /// Forgets the account's tokens at once, after this server revoked a device or deleted the account: its own
    /// next check must not wait for the notification. A lookup begun before may not be remembered.
    func forget(account: UUID) {
        lock.withLock {
            epoch &+= 1
            tokens.removeAll { $0.accountID == account }
        }
    }

    /// For tests: whether the cache vouches for the head, the tokens it holds, the listener's backend, whether the
    /// last connection's probe was lost.
    var state: (trusted: Bool, tokens: Int, listenerPID: Int32?, probeFailed: Bool) {
        lock.withLock { (head != nil, tokens.count, listenerPID, probeFailed) }
    }

    /// Whether `digest` is held (tests).
    func holds(digest: [UInt8]) -> Bool { lock.withLock { tokens.contains(digest) } }

    private var isStopping: Bool { lock.withLock { stopping } }

    /// Connects, LISTENs, proves notifications arrive, reads the head and follows the notifications; connects again
    /// whenever the connection is lost, trusting nothing until the head is read again.
    private func listen() {
        defer { done.signal() }
        var lastFailure: String?
        while !isStopping {
            do {
                let listener = try PostgresListener(
                    conninfo: conninfo, channels: ["catalog_head", "device_tokens", Self.probeChannel])
                try probe(listener)
                // Notifications sent before the LISTEN are lost, those received during the probe dropped: forget
                // every token, then read the head.
                lock.withLock {
                    tokens.removeAll()
                    epoch &+= 1
                    listenerPID = listener.backendPID
                    probeFailed = false
                }
                try readHead(listener)
                lock.withLock { heardAt = .now }
                if lastFailure != nil {
                    log(ServerLog.line(.info, "catalog_check_listening", [:]))
                    lastFailure = nil
                }
                while !isStopping {
                    var headChanged = false
                    for notification in try listener.notifications(waitingUpTo: .milliseconds(100)) {
                        if notification.channel == "catalog_head" { headChanged = true; continue }
                        if notification.channel == Self.probeChannel {
                            if notification.payload == heartbeatPayload { lock.withLock { heardAt = .now } }
                            continue
                        }
                        let digest = Hex.bytes(notification.payload)
                        lock.withLock {
                            epoch &+= 1
                            if let digest { tokens.removeValue(forKey: digest) } else { tokens.removeAll() }
                        }
                    }
                    if headChanged { try readHead(listener) }
                    if ContinuousClock.now - lock.withLock({ heardAt }) >= Self.heartbeatLease {
                        throw HeartbeatLost(lease: Self.heartbeatLease)
                    }
                }
            } catch {
                lock.withLock {
                    head = nil
                    tokens.removeAll()
                    epoch &+= 1
                    listenerPID = nil
                }
                if isStopping { break }
                let message = String(describing: error)
                let lost = error is ProbeLost
                if lastFailure != message {
                    log(
                        ServerLog.line(
                            lost ? .error : .warning,
                            lost ? "catalog_check_notifications_not_delivered" : "catalog_check_not_listening",
                            ["message": .string(message)]))
                    lastFailure = message
                }
                lock.withLock { probeFailed = lost }
                sleepUnlessStopping(lost ? Self.probeRetry : .milliseconds(200))
            }
        }
        lock.withLock {
            head = nil
            tokens.removeAll()
        }
    }

    /// A listening connection that delivers nothing: through PgBouncer's transaction pooling the LISTEN ran on a
    /// server connection that went back to the pool.
    struct ProbeLost: Error, CustomStringConvertible {
        let timeout: Duration
        var description: String {
            "a notification sent to the catalog check's listening connection did not arrive within \(timeout): "
                + "DATABASE_NOTIFY_URL must reach PostgreSQL directly (the primary, or HAProxy's primary port), not "
                + "through a transaction pooler such as PgBouncer; until then every catalog check reads the database"
        }
    }

    /// Notifies the probe channel with `heartbeatPayload` each `heartbeatInterval` on a connection of its own. One
    /// that cannot be sent is one not heard: the lease runs out just the same.
    private func sendHeartbeats() {
        var connection: PostgresConnection?
        while !isStopping {
            do {
                let sending = try connection ?? PostgresConnection(conninfo: heartbeatConninfo)
                connection = sending
                _ = try sending.query("SELECT pg_notify(\(Self.probeChannel), \(heartbeatPayload))")
            } catch {
                connection = nil
            }
            sleepUnlessStopping(Self.heartbeatInterval)
        }
    }

    /// A listening connection that no longer hears what the server's own pool notifies: its server stopped, or no
    /// longer takes the writes (the pool follows a failover to the new primary; this connection stays on the old).
    struct HeartbeatLost: Error, CustomStringConvertible {
        let lease: Duration
        var description: String {
            "the catalog check's listening connection heard none of its heartbeats (sent where the writes go, each "
                + "second) for \(lease): its server stopped or no longer takes the writes; listening again"
        }
    }

    /// Sends the new listening connection a random nonce and waits for it. Sent from a connection of its own: sent on
    /// the listening one, it came back through PgBouncer (the pooler lends it the same server connection, whose own
    /// notification arrives before its transaction ends), where another session's never does. Whatever else arrives
    /// meanwhile is dropped: the tokens and the head are reloaded after.
    private func probe(_ listener: PostgresListener) throws {
        let nonce = UUID().uuidString
        _ = try PostgresConnection(conninfo: conninfo).query("SELECT pg_notify(\(Self.probeChannel), \(nonce))")
        let deadline = ContinuousClock.now + Self.probeTimeout
        while !isStopping {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw ProbeLost(timeout: Self.probeTimeout) }
            let received = try listener.notifications(waitingUpTo: min(.milliseconds(100), left))
            if received.contains(where: { $0.channel == Self.probeChannel && $0.payload == nonce }) { return }
        }
        throw CancellationError()
    }

    /// Sleeps `duration`, or until `stop`.
    private func sleepUnlessStopping(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let until = Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) / 1e18)
        stopped.lock()
        defer { stopped.unlock() }
        // `stop` sets `stopping` before it broadcasts, holding the lock: not between this check and the wait.
        while !isStopping, stopped.wait(until: until) {}
    }

    private func readHead(_ listener: PostgresListener) throws {
        let read = try FeedCursor(feedRow: listener.query(FeedCursor.headQuery)[0])
        lock.withLock {
            if let current = head, current.generation == read.generation, current.version > read.version { return }
            head = read
        }
    }
}

/// A map of at most `capacity` entries that drops the least recently used one to make room.
struct LeastRecentlyUsed<Key: Hashable, Value> {
    private struct Entry {
        var key: Key
        var value: Value
        var newer: Int?
        var older: Int?
    }
    let capacity: Int
    private var index: [Key: Int] = [:]
    private var entries: [Entry] = []
    private var newest: Int?
    private var oldest: Int?

    init(capacity: Int) { self.capacity = capacity }

    var count: Int { index.count }

    func contains(_ key: Key) -> Bool { index[key] != nil }

    /// Reading an entry makes it the most recently used; setting nil removes it.
    subscript(key: Key) -> Value? {
        mutating get {
            guard let slot = index[key] else { return nil }
            touch(slot)
            return entries[slot].value
        }
        set {
            guard let newValue else { return removeValue(forKey: key) }
            if let slot = index[key] {
                entries[slot].value = newValue
                touch(slot)
                return
            }
            let slot: Int
            if entries.count < capacity {
                slot = entries.count
                entries.append(Entry(key: key, value: newValue))
            } else {
                // The oldest entry's slot is reused for the new one.
                slot = oldest!
                unlink(slot)
                index[entries[slot].key] = nil
                entries[slot] = Entry(key: key, value: newValue)
            }
            index[key] = slot
            linkNewest(slot)
        }
    }

    mutating func removeValue(forKey key: Key) {
        guard let slot = index.removeValue(forKey: key) else { return }
        unlink(slot)
        // The last slot moves into the freed one, so the slots stay 0..<count.
        let last = entries.count - 1
        if slot != last {
            let moved = entries[last]
            entries[slot] = moved
            index[moved.key] = slot
            if let newer = moved.newer { entries[newer].older = slot } else { newest = slot }
            if let older = moved.older { entries[older].newer = slot } else { oldest = slot }
        }
        entries.removeLast()
    }

    mutating func removeAll(where shouldRemove: (Value) -> Bool) {
        for key in entries.filter({ shouldRemove($0.value) }).map(\.key) { removeValue(forKey: key) }
    }

    mutating func removeAll() {
        index.removeAll()
        entries.removeAll()
        (newest, oldest) = (nil, nil)
    }

    private mutating func touch(_ slot: Int) {
        guard newest != slot else { return }
        unlink(slot)
        linkNewest(slot)
    }

    private mutating func unlink(_ slot: Int) {
        let (newer, older) = (entries[slot].newer, entries[slot].older)
        if let newer { entries[newer].older = older } else { newest = older }
        if let older { entries[older].newer = newer } else { oldest = newer }
        entries[slot].newer = nil
        entries[slot].older = nil
    }

    private mutating func linkNewest(_ slot: Int) {
        entries[slot].older = newest
        entries[slot].newer = nil
        if let newest { entries[newest].newer = slot }
        newest = slot
        if oldest == nil { oldest = slot }
    }
}
