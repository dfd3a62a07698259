internal import CMicroHTTPD
import Foundation
import Synchronization

/// The connections waiting for a request's head or body, each with the time it must be in by. Any byte resets
/// MHD's idle timeout, so a client sending a header line or a body byte every few seconds would hold its
/// connection for ever: a timer shuts the socket of one past its deadline, and MHD, reading the end, closes the
/// connection. A late body is answered 408 first (MHD takes no response while it reads one); a late head gets
/// no answer, as it may not even be HTTP. An idle keep-alive connection, which sent nothing of a next request, is
/// closed so too, but only a head that had begun is reported: idle clients (a pool of keep-alive connections) are
/// the normal case, not a slow client.
final class ReceiveDeadlines: @unchecked Sendable {  // `timer` is guarded by `timerLock`
    private struct Waiting {
        var socket: Int32
        var deadline: ContinuousClock.Instant
        /// A body is answered before its connection is closed, unless it was answered already (refused).
        var answersWhenLate: Bool
        /// The request line is in: a head past its deadline is a slow one, not an idle connection.
        var headBegun: Bool
    }

    /// For a head; a body gets as long plus its length at `minimumBodyBytesPerSecond`.
    let headTimeout: Duration
    let minimumBodyBytesPerSecond: Int
    /// By connection (its address), in the stripe the address hashes to. Shutting a socket under its stripe's lock
    /// is safe: MHD reports a connection closed (`closed`) before it closes the socket, so a socket here is never one
    /// reused by another connection. One lock for all was the server's most contended (each request takes it three
    /// to five times, from a thread per connection).
    private let stripes = (0..<16).map { _ in Stripe() }
    private final class Stripe: Sendable {
        let waiting = Mutex<[UInt: Waiting]>([:])
    }
    private let timerLock = NSLock()
    /// Made and resumed by `startWatching` (dispatch traps on releasing a source never resumed).
    private var timer: DispatchSourceTimer?

    init(headTimeout: Duration, minimumBodyBytesPerSecond: Int) {
        self.headTimeout = headTimeout
        self.minimumBodyBytesPerSecond = max(1, minimumBodyBytesPerSecond)
    }

    func opened(_ connection: OpaquePointer) { wait(for: connection, within: headTimeout, answersWhenLate: false) }

    /// The request line is in (MHD's URI log callback), the rest of the head not yet.
    func requestLineArrived(_ connection: OpaquePointer) {
        withWaiting(connection) { $0?.headBegun = true }
    }

    func headArrived(_ connection: OpaquePointer) {
        withWaiting(connection) { $0 = nil }
    }

    /// The head announced a body of `bytes` (or, chunked, of at most `bytes`).
    func bodyExpected(_ connection: OpaquePointer, bytes: Int) {
        let allowed = headTimeout + .seconds(Double(bytes) / Double(minimumBodyBytesPerSecond))
        wait(for: connection, within: allowed, answersWhenLate: true)
    }

    /// The body was answered while it came (refused): at its deadline the connection is only closed.
    func bodyRefused(_ connection: OpaquePointer) {
        withWaiting(connection) { $0?.answersWhenLate = false }
    }

    func bodyArrived(_ connection: OpaquePointer) { headArrived(connection) }

    /// An answer went out: the next request's head is due within `headTimeout` (an idle keep-alive connection
    /// ends so).
    func answered(_ connection: OpaquePointer) { opened(connection) }

    func closed(_ connection: OpaquePointer) { headArrived(connection) }

    private func wait(for connection: OpaquePointer, within allowed: Duration, answersWhenLate: Bool) {
        let socket = loyalty_MHD_connection_socket(connection)
        guard socket >= 0 else { return }
        // A body's wait begins with its head whole.
        let entry = Waiting(
            socket: socket, deadline: ContinuousClock.now + allowed, answersWhenLate: answersWhenLate,
            headBegun: answersWhenLate)
        withWaiting(connection) { $0 = entry }
    }

    private func withWaiting(_ connection: OpaquePointer, _ body: (inout Waiting?) -> Void) {
        let key = UInt(bitPattern: connection)
        // Fibonacci hashing: the high bits pick the stripe (the low ones are the allocator's alignment).
        stripes[Int((key &* 0x9E37_79B9_7F4A_7C15) >> 60)].waiting.withLock { body(&$0[key]) }
    }

    /// Checks the deadlines once a second. `answerLateBody` writes the answer to a late body's socket (under this
    /// object's lock, so the socket is still the connection's); `report` says when connections were closed.
    func startWatching(
        answerLateBody: @escaping @Sendable (Int32) -> Void, report: @escaping @Sendable (String) -> Void
    ) {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1), leeway: .milliseconds(100))
        let seconds = headTimeout.components.seconds
        let rate = minimumBodyBytesPerSecond
        timer.setEventHandler { [weak self] in
            self?.closeOverdue(answeringLateBodies: answerLateBody) { heads, bodies in
                if heads > 0 { report("closed connections whose request head took longer than \(seconds) s") }
                if bodies > 0 {
                    report("answered 408 and closed connections whose request body took longer than \(seconds) s "
                        + "plus its length at \(rate) bytes/s")
                }
            }
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

    /// Shuts the sockets past their deadline, answering those that waited for a body first. `report` is told how
    /// many waited for a head (or a refused body) and how many for a body before any is shut, so that its log line
    /// is never later than what a client sees.
    private func closeOverdue(
        answeringLateBodies answer: (Int32) -> Void, report: (_ heads: Int, _ bodies: Int) -> Void
    ) {
        let now = ContinuousClock.now
        var (heads, bodies) = (0, 0)
        for stripe in stripes {
            stripe.waiting.withLock { waiting in
                for entry in waiting.values where entry.deadline <= now {
                    if entry.answersWhenLate { bodies += 1 } else if entry.headBegun { heads += 1 }
                }
            }
        }
        if heads + bodies > 0 { report(heads, bodies) }
        for stripe in stripes {
            stripe.waiting.withLock { waiting in
                for (connection, entry) in waiting where entry.deadline <= now {
                    if entry.answersWhenLate { answer(entry.socket) }
                    shutdown(entry.socket, Int32(SHUT_RDWR))
                    waiting.removeValue(forKey: connection)
                }
            }
        }
    }
}
