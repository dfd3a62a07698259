import Synchronization

/// The service's log lines, kept to be read by the test.
public final class LogRecorder: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    public var record: @Sendable (String) -> Void { { line in self.lines.withLock { $0.append(line) } } }
    public var recorded: [String] { lines.withLock { $0 } }

    /// Forgets what was recorded so far.
    public func removeAll() { lines.withLock { $0.removeAll() } }
}
