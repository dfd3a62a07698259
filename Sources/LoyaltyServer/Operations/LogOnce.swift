import Foundation
import Synchronization

/// Lets one log line per key through per `period`, however often its event recurs: a device flooding the resolver,
/// or sending impossible journeys, writes one line an hour, not one a request. Keys older than the period are
/// dropped when the table reaches `pruneAt`, so it holds about the keys of one period.
final class LogOnce: Sendable {
    let period: TimeInterval
    private static let pruneAt = 10_000
    private let lastLogged = Mutex<[String: Date]>([:])

    init(period: TimeInterval) { self.period = period }

    /// True the first time `key` is seen, and again once `period` has passed since it was last true.
    func shouldLog(_ key: String, at now: Date) -> Bool {
        lastLogged.withLock { lastLogged in
            if let last = lastLogged[key], now.timeIntervalSince(last) < period, now >= last { return false }
            if lastLogged.count >= Self.pruneAt {
                lastLogged = lastLogged.filter { now.timeIntervalSince($0.value) < period }
            }
            lastLogged[key] = now
            return true
        }
    }
}
