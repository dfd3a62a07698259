import Foundation
import Synchronization

/// How fast guesses may come: a token bucket per client address (an IPv6 client by its /64, which one
/// subscriber usually holds whole) or per account, for each `RateLimit`. Kept in this process's memory:
/// docs/OPERATIONS.md says what that means with several instances.
public struct RateLimits: Sendable {
    public struct Bucket: Sendable {
        /// Requests allowed at once, after a quiet spell.
        public var burst: Double
        /// Requests allowed per second after the burst.
        public var perSecond: Double

        public init(burst: Double, perSecond: Double) {
            self.burst = burst
            self.perSecond = perSecond
        }
    }

    public var buckets: [RateLimit: Bucket]

    public init(buckets: [RateLimit: Bucket]) { self.buckets = buckets }

    /// Room for a shop's worth of shoppers behind one address; far too slow to guess a 59-bit link code or a token.
    public static let standard = RateLimits(buckets: [
        .accountCreation: Bucket(burst: 30, perSecond: 1.0 / 10),
        .linkCodeAttempts: Bucket(burst: 10, perSecond: 1.0 / 60),
        .linkCodeCreation: Bucket(burst: 10, perSecond: 1.0 / 60),
        .failedAuthenticationByAddress: Bucket(burst: 20, perSecond: 1.0 / 5),
        .failedAuthenticationByAccount: Bucket(burst: 10, perSecond: 1.0 / 60),
        // A scan sends a batch when it hears a new identifier: a walk through a shop is a few a minute. Guessing an
        // 8-byte identifier at 100 a batch, one batch a second, takes ~10^15 years per beacon.
        .sightings: Bucket(burst: 30, perSecond: 1),
    ])

    /// No limits: for load tests, whose thousands of clients all come from one address.
    public static let unlimited = RateLimits(buckets: [:])
}

/// What a bucket counts; the raw value is its label in /metrics.
public enum RateLimit: String, Sendable, CaseIterable {
    /// `POST /v1/accounts`, per address.
    case accountCreation = "account_creation"
    /// `POST /v1/devices` with a link code that is not live, per address.
    case linkCodeAttempts = "link_code_attempts"
    /// `POST /v1/link-codes`, per account.
    case linkCodeCreation = "link_code_creation"
    /// A credential that matches nothing, per address and per kind of credential (`CredentialKind`): a shop's
    /// bad device tokens never lock its tills out.
    case failedAuthenticationByAddress = "failed_authentication_address"
    /// A device token naming an account with a secret that does not match, per account.
    case failedAuthenticationByAccount = "failed_authentication_account"
    /// `POST /v1/sightings`, per device.
    case sightings = "sightings"
}

/// What a failed authentication tried, from the credential's prefix: each kind has its own buckets.
enum CredentialKind: String {
    case device, retailer, till, console, other

    init(bearerToken token: String) {
        self =
            token.hasPrefix(deviceTokenPrefix) ? .device
            : token.hasPrefix(retailerKeyPrefix) ? .retailer : token.hasPrefix(tillKeyPrefix) ? .till : .other
    }
}

final class RateLimiter: Sendable {
    private struct Key: Hashable {
        var limit: RateLimit
        var client: String
        var kind: CredentialKind?
    }

    private struct Level {
        var tokens: Double
        var updated: Double
    }

    private struct State {
        var levels: [Key: Level] = [:]
        var refused: [RateLimit: Int] = [:]
        var pruned: Double = 0
    }

    /// Past this many buckets, or this many seconds after the last time, the full ones (refilled, so the same
    /// as absent) are dropped.
    private static let pruneThreshold = 10_000
    private static let pruneSeconds = 60.0

    private let limits: RateLimits
    private let now: @Sendable () -> Double
    private let state = Mutex(State())
    /// Buckets not known to be full: while 0, `check` answers without taking the lock (the 304 path asks
    /// on every request).
    private let partlyEmpty = Atomic<Int>(0)

    /// `now` in seconds, from any fixed origin.
    init(_ limits: RateLimits, now: @escaping @Sendable () -> Double = RateLimiter.monotonicSeconds) {
        self.limits = limits
        self.now = now
    }

    static let monotonicSeconds: @Sendable () -> Double = {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Seconds until `client` may try again when its bucket for `limit` (and `kind`) is empty (counted as
    /// refused), else nil.
    func check(_ limit: RateLimit, _ client: String, kind: CredentialKind? = nil) -> Int? {
        guard limits.buckets[limit] != nil, partlyEmpty.load(ordering: .relaxed) > 0 else { return nil }
        return update(limit, client, kind, taking: false)
    }

    /// Takes a token: the seconds until one is there when the bucket is empty (counted as refused), else nil.
    @discardableResult
    func take(_ limit: RateLimit, _ client: String, kind: CredentialKind? = nil) -> Int? {
        guard limits.buckets[limit] != nil else { return nil }
        return update(limit, client, kind, taking: true)
    }

    private func update(_ limit: RateLimit, _ client: String, _ kind: CredentialKind?, taking: Bool) -> Int? {
        guard let bucket = limits.buckets[limit] else { return nil }
        let now = now()
        let key = Key(limit: limit, client: Self.clientKey(client), kind: kind)
        return state.withLock { state in
            var level = state.levels[key] ?? Level(tokens: bucket.burst, updated: now)
            level.tokens = min(bucket.burst, level.tokens + max(0, now - level.updated) * bucket.perSecond)
            level.updated = now
            if level.tokens < 1 {
                state.refused[limit, default: 0] += 1
                return Int(((1 - level.tokens) / bucket.perSecond).rounded(.up))
            }
            defer {
                if state.levels.count > Self.pruneThreshold || now - state.pruned > Self.pruneSeconds {
                    prune(&state, now: now)
                }
            }
            guard taking else { return nil }
            level.tokens -= 1
            if state.levels.updateValue(level, forKey: key) == nil { partlyEmpty.add(1, ordering: .relaxed) }
            return nil
        }
    }

    private func prune(_ state: inout State, now: Double) {
        state.levels = state.levels.filter { key, level in
            guard let bucket = limits.buckets[key.limit] else { return false }
            return level.tokens + (now - level.updated) * bucket.perSecond < bucket.burst
        }
        state.pruned = now
        partlyEmpty.store(state.levels.count, ordering: .relaxed)
    }

    /// An IPv6 address by its /64 (hex of its first 8 bytes); anything else as it is.
    private static func clientKey(_ address: String) -> String {
        guard address.contains(":") else { return address }
        var raw = in6_addr()
        guard inet_pton(AF_INET6, address, &raw) == 1 else { return address }
        return withUnsafeBytes(of: &raw) { bytes in
            bytes.prefix(8).map { String($0, radix: 16) }.joined(separator: ".") + "/64"
        }
    }

    /// `loyalty_rate_limited_total` by limit, every limit listed (0 when none was refused).
    func exposition() -> String {
        let refused = state.withLock { $0.refused }
        var text = """
            # HELP loyalty_rate_limited_total Requests answered 429 because a client's or an account's bucket was empty.
            # TYPE loyalty_rate_limited_total counter

            """
        for limit in RateLimit.allCases {
            text += "loyalty_rate_limited_total{limit=\"\(limit.rawValue)\"} \(refused[limit, default: 0])\n"
        }
        return text
    }
}
