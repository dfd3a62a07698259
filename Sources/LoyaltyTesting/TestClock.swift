import Foundation
import Synchronization

/// The server's clock in a test: it reads `base` plus however far the test has moved it.
public final class TestClock: Sendable {
    private let base: @Sendable () -> Date
    private let offset = Mutex<TimeInterval>(0)

    /// Stands still at `start` until the test moves it.
    public convenience init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        self.init(base: { start })
    }

    /// Runs with the machine's clock, `skew` seconds ahead of it (a server whose clock is off).
    public static func machine(aheadBy skew: TimeInterval = 0) -> TestClock {
        TestClock(base: { Date().addingTimeInterval(skew) })
    }

    private init(base: @escaping @Sendable () -> Date) {
        self.base = base
    }

    public var read: @Sendable () -> Date { { self.base().addingTimeInterval(self.offset.withLock { $0 }) } }

    public func advance(by seconds: TimeInterval) {
        offset.withLock { $0 += seconds }
    }
}
