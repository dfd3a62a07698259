internal import CMicroHTTPD
import Foundation
import Synchronization

/// The connections waiting for a request head, each with the time its head must be in by. Any byte resets MHD's
/// idle timeout, so a client sending a header line every few seconds would hold its connection for ever: a timer
/// shuts the socket of one past its deadline, and MHD, reading the end, closes the connection.
final class HeadDeadlines: @unchecked Sendable {  // `timer` is guarded by `timerLock`
    private struct Waiting {
        var socket: Int32
        var deadline: ContinuousClock.Instant
    }

    let timeout: Duration
    /// By connection (its address). Shutting a socket under this lock is safe: MHD reports a connection closed
    /// (`closed`) before it closes the socket, so a socket here is never one reused by another connection.
    private let waiting = Mutex<[UInt: Waiting]>([:])
    private let timerLock = NSLock()
    /// Made and resumed by `startWatching` (dispatch traps on releasing a source never resumed).
    private var timer: DispatchSourceTimer?

    init(timeout: Duration) { self.timeout = timeout }

    func opened(_ connection: OpaquePointer) {
        let socket = loyalty_MHD_connection_socket(connection)
        guard socket >= 0 else { return }
        let deadline = ContinuousClock.now + timeout
        waiting.withLock { $0[UInt(bitPattern: connection)] = Waiting(socket: socket, deadline: deadline) }
    }

    func headArrived(_ connection: OpaquePointer) {
        _ = waiting.withLock { $0.removeValue(forKey: UInt(bitPattern: connection)) }
    }

    /// An answer went out: the next request's head is due within `timeout` (an idle keep-alive connection ends so).
    func answered(_ connection: OpaquePointer) { opened(connection) }

    func closed(_ connection: OpaquePointer) { headArrived(connection) }

    /// Checks the deadlines once a second; `report` says when it closed connections.
    func startWatching(report: @escaping @Sendable (String) -> Void) {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1), leeway: .milliseconds(100))
        let seconds = timeout.components.seconds
        timer.setEventHandler { [weak self] in
            guard let self, self.closeOverdue() > 0 else { return }
            report("closed connections whose request head took longer than \(seconds) s")
        }
        timer.resume()
        timerLock.withLock { self.timer = timer }
    }

    /// Idempotent.
    func stopWatching() {
        timerLock.withLock {
            timer?.cancel()
            timer = nil
        }
    }

    /// Shuts the sockets past their deadline; how many.
    private func closeOverdue() -> Int {
        let now = ContinuousClock.now
        return waiting.withLock { waiting in
            let overdue = waiting.filter { $0.value.deadline <= now }
            for (connection, entry) in overdue {
                shutdown(entry.socket, Int32(SHUT_RDWR))
                waiting.removeValue(forKey: connection)
            }
            return overdue.count
        }
    }
}
